// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// brokenBody's Read fails with an error holding a typed nil that cannot
// print itself under errors.Join.
type brokenBody struct{ err error }

func (b brokenBody) Read([]byte) (int, error) { return 0, b.err }
func (b brokenBody) Close() error             { return nil }

// A read error of the base's response body holding a typed nil (or that
// cannot print itself) is read past as the base's RoundTrip error is: the
// caller's Read returns an error, it does not panic (a reviewer's find:
// only the error RoundTrip got was kept behind the stand-in).
func TestATypedNilInABodyReadErrorIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"joined":     func() error { return errors.Join(io.ErrUnexpectedEOF, (*receiverReadingError)(nil)) },
		"no message": func() error { return errors.Join(io.ErrUnexpectedEOF, panickingMessageError{}) },
	} {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Body: brokenBody{mk()}, Header: http.Header{}, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1))
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			var readErr error
			returned, recovered := onAGoroutine(func() { _, readErr = io.ReadAll(resp.Body) })
			closed, _ := onAGoroutine(func() { resp.Body.Close() })
			if !returned || !closed {
				t.Fatalf("the body's Read panicked with %v (Close returned %v); want an error", recovered, closed)
			}
			if readErr == nil {
				t.Fatal("Read returned no error")
			}
		})
	}
}
