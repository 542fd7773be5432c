// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// nilAsError prints without its receiver but reads it in As, as an
// error whose As looks at its fields does.
type nilAsError struct{ code int }

func (e *nilAsError) Error() string { return "as error" }
func (e *nilAsError) As(any) bool   { return e.code != 0 }

// quietMulti holds many errors and prints only its own text.
type quietMulti struct{ errs []error }

func (q quietMulti) Error() string   { return "several reads failed" }
func (q quietMulti) Unwrap() []error { return q.errs }

// A typed nil past the 256 errors safeError looks at is still read past:
// the GET whose first attempt failed so is retried and answered (a
// reviewer's find: a tree too large to read whole was taken for one
// without a nil, where errors.As reads it all).
func TestATypedNilPastTheWalksBoundIsReadPast(t *testing.T) {
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			errs := make([]error, 0, 301)
			for range 300 {
				errs = append(errs, io.ErrUnexpectedEOF)
			}
			return nil, quietMulti{append(errs, (*nilAsError)(nil))}
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	var resp *http.Response
	var err error
	returned, recovered := onAGoroutine(func() { resp, err = tr.RoundTrip(get(t, t.Context(), "http://api.test/")) })
	if returned && err == nil {
		resp.Body.Close()
	}
	if !returned || err != nil || calls.Load() != 2 {
		t.Fatalf("RoundTrip panicked with %v (returned %v, err %v) after %d calls; want the GET retried and answered", recovered, returned, err, calls.Load())
	}
}
