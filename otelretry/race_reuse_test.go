// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// net/http lets a caller reuse its request once the response body is
// closed, any field of it. A hedge whose PrepareAttemptFunc (or GetBody)
// is still running then must read nothing of the caller's request: here
// the caller reuses it whole (*req = ...), its context and Cancel included.
func TestALateHedgeReadsNothingOfTheCallersReusedRequest(t *testing.T) {
	for _, slow := range []string{"prepare", "getbody"} {
		t.Run(slow, func(t *testing.T) {
			base := drainingOKAfter(30 * time.Millisecond)
			done := make(chan struct{})
			opts := []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 5 * time.Millisecond, MaxShare: 1, MaxHedges: 1}),
				otelretry.WithDeadline(2 * time.Second)}
			if slow == "prepare" {
				opts = append(opts, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
					if n == 2 {
						defer close(done)
						time.Sleep(60 * time.Millisecond)
					}
					return nil
				}))
			}
			rt := otelretry.NewTransport(base, opts...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/search", strings.NewReader(`{"q":1}`))
			req.Header.Set("Idempotency-Key", "k1")
			if slow == "getbody" {
				req.GetBody = func() (io.ReadCloser, error) {
					defer close(done)
					time.Sleep(60 * time.Millisecond)
					return io.NopCloser(strings.NewReader(`{"q":1}`)), nil
				}
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			for i := range 100 { // the caller reuses its request whole
				next, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, fmt.Sprintf("http://api.test/other/%d", i), nil)
				*req = *next
				time.Sleep(time.Millisecond)
			}
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				t.Fatal("the hedge's preparation never ended")
			}
			time.Sleep(50 * time.Millisecond)
		})
	}
}
