// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A *url.Error naming another URL with a secret in its query is
// sanitized in the error the caller gets and in the spans, whether or not
// a typed nil is beside the error it wraps (a reviewer's run).
func TestAURLErrorsSecretIsRedactedBesideATypedNil(t *testing.T) {
	const secret = "s3cr3tT0kenValue0123456789"
	for name, inner := range map[string]func() error{
		"no typed nil": func() error { return errors.Join(io.ErrUnexpectedEOF, errors.New("x")) },
		"typed nil":    func() error { return errors.Join(io.ErrUnexpectedEOF, (*receiverReadingError)(nil)) },
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, &url.Error{Op: "Get", URL: "http://other.test/next?token=" + secret, Err: inner()}
			})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1))
			var err error
			returned, recovered := onAGoroutine(func() { _, err = tr.RoundTrip(get(t, t.Context(), "http://api.test/")) })
			if !returned {
				t.Fatalf("panicked: %v", recovered)
			}
			if err == nil {
				t.Fatal("nil error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the caller's error holds the secret: %q", err.Error())
			}
			for _, s := range rec.Ended() {
				if strings.Contains(s.Status().Description, secret) {
					t.Errorf("span %q status holds the secret: %q", s.Name(), s.Status().Description)
				}
				for _, ev := range s.Events() {
					for _, a := range ev.Attributes {
						if strings.Contains(a.Value.Emit(), secret) {
							t.Errorf("span %q event %q attr %s holds the secret", s.Name(), ev.Name, a.Key)
						}
					}
				}
				for _, a := range s.Attributes() {
					if strings.Contains(a.Value.Emit(), secret) {
						t.Errorf("span %q attr %s holds the secret", s.Name(), a.Key)
					}
				}
			}
		})
	}
}

// refusedWrapper tells a connection refusal by its own Is method and
// wraps an error of its own.
type refusedWrapper struct{ err error }

func (e *refusedWrapper) Error() string        { return "dial api.test: refused" }
func (e *refusedWrapper) Unwrap() error        { return e.err }
func (e *refusedWrapper) Is(target error) bool { return target == syscall.ECONNREFUSED }

// An error that is syscall.ECONNREFUSED by its own Is method proves the
// POST was never sent, and the POST is resent, whether or not a typed nil
// is below it: the stand-in changes nothing of errors.Is but hides the nil
// (a reviewer's find: it compared by equality alone, and the POST ended
// check_state).
func TestAnErrorsOwnIsIsKeptBesideATypedNil(t *testing.T) {
	for name, inner := range map[string]func() error{
		"no typed nil": func() error { return errors.Join(errors.New("x"), errors.New("y")) },
		"typed nil":    func() error { return errors.Join(errors.New("x"), (*receiverReadingError)(nil)) },
	} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if calls.Add(1) == 1 {
					return nil, &refusedWrapper{inner()}
				}
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			var resp *http.Response
			var err error
			returned, recovered := onAGoroutine(func() { resp, err = tr.RoundTrip(post(t, t.Context(), "http://api.test/", "body")) })
			if !returned {
				t.Fatalf("panicked: %v", recovered)
			}
			if err == nil {
				resp.Body.Close()
			}
			if err != nil || calls.Load() != 2 {
				t.Fatalf("err %v after %d calls; want the refused POST resent and answered (2 calls)", err, calls.Load())
			}
		})
	}
}
