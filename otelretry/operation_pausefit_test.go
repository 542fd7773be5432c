// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"sync"
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

// slowTailBody is a small discarded body whose last byte comes at tail
// (since start); Close ends a Read in progress, as net/http's bodies do.
type slowTailBody struct {
	start, tail time.Time
	closed      chan struct{}
	once        sync.Once
	mu          sync.Mutex
	eofAt       time.Duration // since start; 0: no EOF read
	closedAt    time.Duration
	done        bool
}

func (b *slowTailBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done {
		return 0, io.EOF
	}
	select {
	case <-time.After(time.Until(b.tail)):
		b.mu.Lock()
		b.done, b.eofAt = true, time.Since(b.start)
		b.mu.Unlock()
		p[0] = 'x'
		return 1, io.EOF
	case <-b.closed:
		return 0, io.ErrClosedPipe
	}
}

func (b *slowTailBody) Close() error {
	b.once.Do(func() {
		b.mu.Lock()
		b.closedAt = time.Since(b.start)
		b.mu.Unlock()
		close(b.closed)
	})
	return nil
}

// docs/time-and-bodies.md: a discarded body is drained "within the pause
// before the next attempt, counted from the answer as the pause is". An
// answer at 100 ms with Retry-After-Ms 600 has its pause end at 700 ms;
// a Classifier that took 300 ms is part of that pause. The body's last
// byte, at 500 ms, comes within the pause: it is drained, and the next
// call starts at 700 ms. The fit's first version (above) gave the drain
// what was left of the pause at the decision, which the drain counts from
// the answer again: the body was cut at 402 ms.
func TestADiscardedBodyDrainsWithinThePauseAfterASlowClassifier(t *testing.T) {
	for _, tc := range []struct {
		name     string
		classify time.Duration
	}{
		{"no hook time (control)", 0},
		{"a 300 ms Classifier", 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var starts []time.Duration
				var body *slowTailBody
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					starts = append(starts, time.Since(start))
					time.Sleep(100 * time.Millisecond)
					if len(starts) == 2 {
						return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
					}
					body = &slowTailBody{start: start, tail: start.Add(500 * time.Millisecond), closed: make(chan struct{})}
					h := http.Header{}
					h.Set("Retry-After-Ms", "600")
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h, Body: body, ContentLength: -1, Request: r}, nil
				})
				tr := otelretry.NewTransport(base, otelretry.WithoutBudget(),
					otelretry.WithDeadline(time.Second), otelretry.WithMaxAttempts(2),
					otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
					otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
						time.Sleep(tc.classify)
						return otelretry.Classification{}
					}))
				resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/x"))
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				resp.Body.Close()
				if want := []time.Duration{0, 700 * time.Millisecond}; len(starts) != 2 || starts[1] != want[1] {
					t.Errorf("calls started at %v; want %v", starts, want)
				}
				body.mu.Lock()
				defer body.mu.Unlock()
				if body.eofAt != 500*time.Millisecond {
					t.Errorf("the discarded body was cut at %v, not drained (its last byte came at 500 ms, within the pause that ends at 700 ms)", body.closedAt)
				}
			})
		})
	}
}
