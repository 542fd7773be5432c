// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/time-and-bodies.md: a base that ignores its request's context holds
// RoundTrip past the deadline until it returns (otelretry leaves no call
// running behind it), and the operation still ends deadline_exceeded: an
// answer that came after the deadline is not returned. With hedging, both
// calls are waited for (a reviewer's question).
func TestABaseThatIgnoresItsContextHoldsRoundTripPastTheDeadline(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var calls, running atomic.Int32
			var open atomic.Int64
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls.Add(1)
				running.Add(1)
				open.Add(1)
				defer running.Add(-1)
				time.Sleep(5 * time.Second) // r.Context() ignored
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &countedClose{ReadCloser: io.NopCloser(strings.NewReader("late")), open: &open}, Request: r}, nil
			})
			opts := []otelretry.Option{otelretry.WithDeadline(time.Second)}
			if hedged {
				opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond}))
			}
			var res otelretry.Results
			start := time.Now()
			resp, err := otelretry.NewTransport(base, opts...).RoundTrip(get(t, otelretry.WithResults(t.Context(), &res), "http://api.test/items"))
			last := 5 * time.Second // the last call's return: the hedge's starts 10ms in
			if hedged {
				last += 10 * time.Millisecond
			}
			if elapsed := time.Since(start); elapsed != last {
				t.Errorf("hedged %v: RoundTrip returned after %v, want when the last call returned (%v)", hedged, elapsed, last)
			}
			if resp != nil {
				resp.Body.Close()
				t.Errorf("hedged %v: the answer that came after the deadline was returned", hedged)
			}
			var e *otelretry.Error
			if !errors.As(err, &e) || e.Outcome != attrs.OutcomeDeadlineExceeded {
				t.Errorf("hedged %v: err %v, want deadline_exceeded", hedged, err)
			}
			wantCalls := int32(1)
			if hedged {
				wantCalls = 2
			}
			if calls.Load() != wantCalls || running.Load() != 0 || open.Load() != 0 {
				t.Errorf("hedged %v: %d calls, %d still running, %d late bodies open; want %d, none, none", hedged, calls.Load(), running.Load(), open.Load(), wantCalls)
			}
			if op, ok := res.Last(); !ok || op.Outcome != attrs.OutcomeDeadlineExceeded {
				t.Errorf("hedged %v: result %+v, want deadline_exceeded", hedged, op)
			}
		})
	}
}
