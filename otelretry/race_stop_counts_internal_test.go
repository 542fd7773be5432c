// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
)

// TestARacePanicOnASuccessLeavesAnEarlierFailureAsItsRetry: a1's 503 is
// heard at 1.5 s (its Classifier takes 0.5 s), its hedge's 200 at 1.6 s,
// whose Classifier panics at once. Without the panic the 503 is the retry
// the 200 carries out (retried in flight: no token beyond the hedge's).
// With it, the 503 must be judged "as it came" (docs/budget.md), i.e. the
// same: the counts must be where the race would leave them.
func TestARacePanicOnASuccessLeavesAnEarlierFailureAsItsRetry(t *testing.T) {
	type side struct {
		status   int
		answerAt time.Duration
		classify time.Duration
		panics   bool
	}
	for _, maxAttempts := range []int{2, 4} {
		first := side{503, 1500 * time.Millisecond, 500 * time.Millisecond, false}
		hedge := side{200, 600 * time.Millisecond, 0, true}
		got := map[bool]gateCounts{}
		for _, panics := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				th, b := &Throttle{Window: time.Hour}, &Budget{}
				var calls atomic.Int32
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					s := first
					if calls.Add(1) > 1 {
						s = hedge
					}
					select {
					case <-r.Context().Done():
						return nil, r.Context().Err()
					case <-time.After(s.answerAt):
					}
					h := http.Header{"X-Side": {"first"}}
					if s == hedge {
						h.Set("X-Side", "hedge")
					}
					return &http.Response{StatusCode: s.status, Header: h, Body: http.NoBody, Request: r}, nil
				})
				classifier := func(a Answer) Classification {
					if a.Err != nil {
						return Classification{}
					}
					s := first
					if a.Header.Get("X-Side") == "hedge" {
						s = hedge
					}
					time.Sleep(s.classify)
					if panics && s.panics {
						panic("classifier")
					}
					return Classification{}
				}
				tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(maxAttempts),
					WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithClassifier(classifier))
				if p := roundTripPanic(tr, "http://api.test/x"); (p != nil) != panics {
					t.Fatalf("panicked with %v; want a panic %v", p, panics)
				}
				synctest.Wait()
				got[panics] = gateCountsOf(th, b)
			})
		}
		t.Logf("maxAttempts %d: without the panic %+v, with %+v", maxAttempts, got[false], got[true])
		if got[true] != got[false] {
			t.Errorf("maxAttempts %d: with the hedge's Classifier panic %+v, without %+v; want the same", maxAttempts, got[true], got[false])
		}
	}
}

// TestAnAnswerHeardBeforeAPanickedSuccessIsNotSuperseded: the same race,
// the attempt spans. a1 answered first (a 503 at 1.5 s); its hedge's 200
// came at 1.6 s and its Classifier panicked. a1 must not record
// superseded/other_attempt ("the attempt was still in flight when another
// attempt ... answered first", attrs/vocab.go): it answered first.
func TestAnAnswerHeardBeforeAPanickedSuccessIsNotSuperseded(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	synctest.Test(t, func(t *testing.T) {
		base := sidedBase(503, 1500*time.Millisecond, 200, 600*time.Millisecond)
		classifier := func(a Answer) Classification {
			switch a.Header.Get("X-Side") {
			case "first":
				time.Sleep(500 * time.Millisecond)
			case "hedge":
				panic("classifier")
			}
			return Classification{}
		}
		tr := NewTransport(base, WithTracerProvider(tp), WithMaxAttempts(4),
			WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithClassifier(classifier))
		if p := roundTripPanic(tr, "http://api.test/x"); p == nil {
			t.Fatal("no panic")
		}
		synctest.Wait()
	})
	if d := decisionOf(spans, 1); strings.HasPrefix(d, string(attrs.DecisionSuperseded)+"/") {
		t.Errorf("attempt 1 (answered first, a 503) records %s", d)
	}
}

// TestTheSuccessSupersedesOnlyTheAnswersAfterIt: at the unit, a1 is heard
// first, then the hedge's success (settledBy), then a third answer. The
// success leaves heard without being judged (its goroutine panicked before
// its Classifier, in the user's meter) and the race stops: a1, heard before
// the success, is no loser; the answer heard after it stays superseded.
func TestTheSuccessSupersedesOnlyTheAnswersAfterIt(t *testing.T) {
	a1, hedge, a3 := &attempt{}, &attempt{}, &attempt{}
	l := &raceLoop{inFlight: []*attempt{a1, hedge, a3}}
	l.hear(raceMsg{a: a1})
	l.hear(raceMsg{a: hedge, success: true, inTime: true})
	l.hear(raceMsg{a: a3})
	if l.supersedes(a1) || !l.supersedes(a3) {
		t.Fatalf("before the panic: a1 superseded %v, a3 %v; want false, true", l.supersedes(a1), l.supersedes(a3))
	}
	l.remove(hedge) // ended: it panicked with no answer left to judge
	l.stopped, l.heardAtStop = true, slices.Clone(l.heard)
	if l.supersedes(a1) || !l.supersedes(a3) {
		t.Errorf("after the panic: a1 superseded %v, a3 %v; want false, true", l.supersedes(a1), l.supersedes(a3))
	}
}

// TestARacePanicPastTheDeadlineCountsAsTheRaceWould: the hedge's 503 ends
// the race at the deadline, which its Classifier runs past before it
// panics, and attempt 1, cut by the deadline, is superseded: the panicked
// answer is judged in its turn as the rules alone judge it, so the counts
// are where the race would leave them.
func TestARacePanicPastTheDeadlineCountsAsTheRaceWould(t *testing.T) {
	sameCountsWithThePanic(t, func(panics bool) (baseFunc, func(Answer) Classification) {
		base := hedgedBase(http.StatusServiceUnavailable, 10*time.Second)
		classifier := func(a Answer) Classification {
			if a.StatusCode == http.StatusServiceUnavailable {
				time.Sleep(1500 * time.Millisecond) // to 2.5 s, past the 2 s deadline
				if panics {
					panic("classifier")
				}
			}
			return Classification{}
		}
		return base, classifier
	}, WithMaxAttempts(3), WithDeadline(2*time.Second))
}

// TestAPanickedAnswerThatEndsTheRaceSupersedesTheLaterOnes: the hedge's
// 400 (not retryable) wins the race and supersedes attempt 1's 503, heard
// while the 400's Classifier ran. With that Classifier panicking, the 400
// is judged in its turn as the rules alone judge it, and still supersedes
// the 503: the counts are as without the panic.
func TestAPanickedAnswerThatEndsTheRaceSupersedesTheLaterOnes(t *testing.T) {
	sameCountsWithThePanic(t, func(panics bool) (baseFunc, func(Answer) Classification) {
		var calls atomic.Int32
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			status, at := http.StatusServiceUnavailable, 1200*time.Millisecond
			if calls.Add(1) > 1 {
				status, at = http.StatusBadRequest, 0
			}
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-time.After(at):
			}
			return &http.Response{StatusCode: status, Body: http.NoBody, Request: r}, nil
		})
		classifier := func(a Answer) Classification {
			if a.StatusCode == http.StatusBadRequest {
				time.Sleep(500 * time.Millisecond) // attempt 1's 503 is heard meanwhile
				if panics {
					panic("classifier")
				}
			}
			return Classification{}
		}
		return base, classifier
	}, WithMaxAttempts(3))
}
