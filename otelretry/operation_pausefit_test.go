// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The pause counts from the answer (docs/time-and-bodies.md), and only a
// pause that would reach the deadline ends the operation (docs/
// decisions.md). The fit was judged on the time left after the hooks, so
// a Classifier or a Backoff that took 300 ms counted twice: a 600 ms pause
// from an answer at 100 ms, ending at 700 ms under a 1 s deadline, ended
// the operation deadline_exceeded after one call. The hooks' time is now
// part of the pause; the retry starts at 700 ms, and a pause that reaches
// the deadline still ends the operation at once.
func TestAPauseFitsCountedFromTheAnswer(t *testing.T) {
	slowClassifier := otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
		time.Sleep(300 * time.Millisecond)
		return otelretry.Classification{}
	})
	slowBackoff := func(pause time.Duration) otelretry.Option {
		return otelretry.WithBackoff(func(int, otelretry.Answer) time.Duration {
			time.Sleep(300 * time.Millisecond)
			return pause
		})
	}
	for _, tc := range []struct {
		name   string
		hint   string
		opts   []otelretry.Option
		starts []time.Duration // the calls' starts; one call: the pause reached the deadline
	}{
		{"a slow Classifier, a hint that fits", "600", []otelretry.Option{slowClassifier, otelretry.WithBackoff(otelretry.ConstantBackoff(0))},
			[]time.Duration{0, 700 * time.Millisecond}},
		{"a slow Backoff that fits", "", []otelretry.Option{slowBackoff(600 * time.Millisecond)},
			[]time.Duration{0, 700 * time.Millisecond}},
		{"a slow Classifier, a hint that reaches the deadline", "900", []otelretry.Option{slowClassifier, otelretry.WithBackoff(otelretry.ConstantBackoff(0))},
			[]time.Duration{0}},
		{"a slow Backoff whose pause reaches the deadline", "", []otelretry.Option{slowBackoff(900 * time.Millisecond)},
			[]time.Duration{0}},
		{"hooks slower than the pause", "", []otelretry.Option{slowClassifier, slowBackoff(100 * time.Millisecond)},
			[]time.Duration{0, 700 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var starts []time.Duration
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					starts = append(starts, time.Since(start))
					time.Sleep(100 * time.Millisecond)
					h := http.Header{}
					if tc.hint != "" && len(starts) == 1 {
						h.Set("Retry-After-Ms", tc.hint)
					}
					status := http.StatusServiceUnavailable
					if len(starts) == 2 {
						status = http.StatusOK
					}
					return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
				})
				tr := otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithoutBudget(),
					otelretry.WithDeadline(time.Second), otelretry.WithMaxAttempts(2)}, tc.opts...)...)
				var res otelretry.Results
				resp, err := tr.RoundTrip(get(t, otelretry.WithResults(t.Context(), &res), "http://api.test/x"))
				if resp != nil {
					resp.Body.Close()
				}
				if len(starts) != len(tc.starts) {
					t.Fatalf("calls started at %v; want %v (err %v)", starts, tc.starts, err)
				}
				for i := range starts {
					if starts[i] != tc.starts[i] {
						t.Errorf("call %d started at %v; want %v", i+1, starts[i], tc.starts[i])
					}
				}
				want := attrs.OutcomeReturn
				if len(tc.starts) == 1 {
					want = attrs.OutcomeDeadlineExceeded
				}
				if ops := res.Operations(); len(ops) != 1 || ops[0].Outcome != want {
					t.Errorf("operations %+v (err %v); want one, %s", ops, err, want)
				}
			})
		})
	}
}
