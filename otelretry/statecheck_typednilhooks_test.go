// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A state check hook whose lookup (made, say, over HTTP/3) failed with an
// error holding a typed nil returns that error: RoundTrip returns an
// ErrOutcomeUnknown error and does not panic, and every span ends (a
// reviewer's find).
func TestAStateChecksErrorHoldingATypedNilIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"joined":           func() error { return errors.Join(errors.New("lookup failed"), (*receiverReadingError)(nil)) },
		"the error itself": func() error { return (*receiverReadingError)(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				io.ReadAll(r.Body)
				return nil, io.ErrUnexpectedEOF // sent: the write's outcome is unknown
			})
			checked := 0
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
				otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
					checked++
					return otelretry.StateResult{State: attrs.StateUnknown}, mk()
				}))
			err := anErrorIsReturned(t, rec, func() (*http.Response, error) { return tr.RoundTrip(post(t, t.Context(), "http://api.test/x", "body")) })
			if checked != 1 {
				t.Fatalf("state check called %d times; want 1", checked)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v; want ErrOutcomeUnknown", err)
			}
		})
	}
}
