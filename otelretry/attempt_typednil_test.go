// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// receiverReadingError reads its receiver in Error, as quic-go's
// *http3.Error does (and in As and Unwrap too); a nil one is in some of
// quic-go's chains.
type receiverReadingError struct{ code int }

func (e *receiverReadingError) Error() string { return fmt.Sprint("H3 error ", e.code) }

// panickingMessageError cannot print itself.
type panickingMessageError struct{}

func (panickingMessageError) Error() string { panic("no message") }

// A typed nil in the base's error tree, or an error that cannot print
// itself, is read past: the GET whose first attempt failed so is retried
// and answered, RoundTrip does not panic and every span ends (a
// reviewer's find: otelretry called Error, As and Unwrap on the nil
// receiver and panicked out of RoundTrip after one call).
func TestATypedNilInTheBasesErrorIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"joined": func() error { return errors.Join(io.ErrUnexpectedEOF, (*receiverReadingError)(nil)) },
		"wrapped": func() error {
			return fmt.Errorf("read: %w", errors.Join((*receiverReadingError)(nil), io.ErrUnexpectedEOF))
		},
		"the error itself": func() error { return (*receiverReadingError)(nil) },
		"no message":       func() error { return fmt.Errorf("read: %w", errors.Join(io.ErrUnexpectedEOF, panickingMessageError{})) },
	} {
		t.Run(name, func(t *testing.T) { aGETFailedOnceIsRetried(t, mk) })
	}
}

// aGETFailedOnceIsRetried runs a GET whose first call fails with first()
// and whose second is answered 200, and fails t unless RoundTrip returned
// that answer after the two calls, with no panic and every span ended.
func aGETFailedOnceIsRetried(t *testing.T, first func() error, opts ...otelretry.Option) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, first()
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	opts = append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithBackoff(otelretry.ConstantBackoff(0))}, opts...)
	tr := otelretry.NewTransport(base, opts...)
	var resp *http.Response
	var err error
	returned, recovered := onAGoroutine(func() { resp, err = tr.RoundTrip(get(t, t.Context(), "http://api.test/")) })
	if returned && err == nil {
		resp.Body.Close()
	}
	if open := openSpans(rec); len(open) > 0 {
		t.Errorf("open spans: %v", open)
	}
	if !returned || err != nil || calls.Load() != 2 {
		t.Fatalf("RoundTrip panicked with %v (returned %v, err %v) after %d calls; want the GET retried and answered", recovered, returned, err, calls.Load())
	}
}

// anErrorIsReturned calls roundTrip and fails t unless it returned an
// error that prints, with no panic and every span rec recorded ended; it
// returns that error.
func anErrorIsReturned(t *testing.T, rec *tracetest.SpanRecorder, roundTrip func() (*http.Response, error)) error {
	t.Helper()
	var err error
	returned, recovered := onAGoroutine(func() {
		var resp *http.Response
		if resp, err = roundTrip(); err == nil {
			resp.Body.Close()
		}
	})
	if !returned {
		t.Fatalf("RoundTrip panicked with %v; want an error", recovered)
	}
	if err == nil {
		t.Fatal("RoundTrip returned no error")
	}
	if ok, _ := onAGoroutine(func() { _ = err.Error() }); !ok {
		t.Error("the caller's error cannot print itself")
	}
	if rec != nil {
		if open := openSpans(rec); len(open) > 0 {
			t.Errorf("open spans: %v", open)
		}
	}
	return err
}

// The error the caller gets of an operation whose base's error held a
// typed nil prints, and errors.Is still finds what the tree holds.
func TestATypedNilInTheBasesErrorLeavesAPrintableError(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.Join(io.ErrUnexpectedEOF, (*receiverReadingError)(nil))
	})
	tr := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1))
	var err error
	returned, recovered := onAGoroutine(func() { _, err = tr.RoundTrip(get(t, t.Context(), "http://api.test/")) })
	if !returned {
		t.Fatalf("RoundTrip panicked: %v", recovered)
	}
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v; want one errors.Is finds io.ErrUnexpectedEOF in", err)
	}
	if msg := err.Error(); msg == "" {
		t.Error("the error prints nothing")
	}
}
