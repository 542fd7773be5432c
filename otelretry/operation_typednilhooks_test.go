// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A PrepareAttemptFunc whose token refresh (made, say, over HTTP/3) failed
// with an error holding a typed nil returns that error: RoundTrip returns
// an error and does not panic, and every span ends (a reviewer's find: only
// the base's errors were kept behind the stand-in).
func TestAPreparationsErrorHoldingATypedNilIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"joined":           func() error { return errors.Join(errors.New("token refresh failed"), (*receiverReadingError)(nil)) },
		"the error itself": func() error { return (*receiverReadingError)(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
				otelretry.WithPrepareAttempt(func(*http.Request, int) error { return mk() }))
			anErrorIsReturned(t, rec, func() (*http.Response, error) { return tr.RoundTrip(get(t, t.Context(), "http://api.test/x")) })
		})
	}
}

// The caller cancels with a cause holding a typed nil
// (context.WithCancelCause): RoundTrip returns an error, it does not panic
// (a reviewer's find).
func TestACallersCauseThatIsATypedNilIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"joined":           func() error { return errors.Join(errors.New("shutting down"), (*receiverReadingError)(nil)) },
		"the error itself": func() error { return (*receiverReadingError)(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			ctx, cancel := context.WithCancelCause(t.Context())
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				cancel(mk())
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
			anErrorIsReturned(t, rec, func() (*http.Response, error) { return tr.RoundTrip(get(t, ctx, "http://api.test/x")) })
		})
	}
}
