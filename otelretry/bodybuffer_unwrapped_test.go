// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/time-and-bodies.md: a body otelretry does not buffer (too large, or
// of a request that can make one attempt only) is handed to the base in a
// wrapper of otelretry's that closes it once (so that a cut can close it
// while the base still reads it): the base reads the caller's bytes, and
// however often the base and otelretry close it, the caller's body is
// closed once.
func TestABodyNotBufferedReachesTheBaseClosedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []otelretry.Option
	}{
		{"too large", []otelretry.Option{otelretry.WithBodyBuffer(4, 1<<20)}},
		{"one attempt", []otelretry.Option{otelretry.WithMaxAttempts(1)}},
	} {
		for _, clientSpans := range []bool{false, true} {
			name := tc.name + "/without client spans"
			opts := append([]otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithoutBudget(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0))}, tc.opts...)
			if clientSpans {
				name = tc.name + "/client spans"
			} else {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			t.Run(name, func(t *testing.T) {
				var got []byte
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					got, _ = io.ReadAll(r.Body)
					r.Body.Close()
					r.Body.Close()
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				rt := otelretry.NewTransport(base, opts...)
				req, body := putWithoutGetBody(t, context.Background(), "http://api.test/x", strings.NewReader("payload"), 7)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if string(got) != "payload" {
					t.Errorf("the base read %q", got)
				}
				if n := body.closes.Load(); n != 1 {
					t.Errorf("closed %d times, want 1", n)
				}
			})
		}
	}
}
