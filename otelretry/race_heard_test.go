// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The race's answers as the loop hears them, before their Classifiers run
// (docs/hedging.md: "The first answer whose verdict is not `retry` wins"):
// the first success heard wins over any answer that came after it, and an
// answer that came before it is judged as it stands, whichever Classifier
// finishes first.

// reply is how a base answers an attempt: status after a wait, with header;
// a status of 0 waits until the attempt is canceled.
type reply struct {
	status int
	after  time.Duration
	header http.Header
}

// firstAndHedges answers attempt 1 (numbered in X-Attempt) with first and
// every later attempt with hedge.
func firstAndHedges(first, hedge reply) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		rp := first
		if n, _ := strconv.Atoi(r.Header.Get("X-Attempt")); n != 1 {
			rp = hedge
		}
		wait := (<-chan time.Time)(nil)
		if rp.status != 0 {
			wait = time.After(rp.after)
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		h := http.Header{}
		for k, v := range rp.header {
			h[k] = v
		}
		return &http.Response{StatusCode: rp.status, Header: h, Request: r,
			Body: io.NopCloser(strings.NewReader(http.StatusText(rp.status)))}, nil
	}
}

// hedgedAfter20ms hedges a GET after 20 ms, numbering attempts in
// X-Attempt; its Classifier takes 30 ms over a 2xx (a lookup over a
// success) and other over any other answer.
func hedgedAfter20ms(base http.RoundTripper, other time.Duration, opts ...otelretry.Option) *otelretry.Transport {
	return otelretry.NewTransport(base, append([]otelretry.Option{
		otelretry.WithAttemptHeader("X-Attempt"),
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			if a.StatusCode/100 == 2 {
				time.Sleep(30 * time.Millisecond)
			} else {
				time.Sleep(other)
			}
			return otelretry.Classification{}
		})}, opts...)...)
}

// getThrough sends a GET of path through rt with ctx and reads the response.
func getThrough(t *testing.T, rt http.RoundTripper, ctx context.Context, path string) (int, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test"+path, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Attempt 1 is answered 200 at 30 ms (its Classifier takes 30 ms); its
// hedge, sent at 20 ms, is answered 404 at 35 ms and judged at once. The
// 200 came first: it wins, not the 404 whose Classifier finished first.
func TestTheSuccessHeardFirstWinsOverALaterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := hedgedAfter20ms(firstAndHedges(reply{status: 200, after: 30 * time.Millisecond}, reply{status: 404, after: 15 * time.Millisecond}), 0)
		if status, err := getThrough(t, rt, t.Context(), "/x"); err != nil || status != 200 {
			t.Errorf("got %d, %v; want the 200 attempt 1 was answered first (at 30 ms, the hedge's 404 at 35 ms)", status, err)
		}
	})
}

// The caller cancels at 40 ms, after attempt 1's 200 was heard (its
// Classifier runs until 60 ms), while the hedge still waits: the 200 is
// returned, as it is without hedging (callerEnded: "unless it got a
// success"), not the hedge's cancellation.
func TestTheSuccessHeardFirstWinsOverTheCallersLaterCancel(t *testing.T) {
	for name, hedged := range map[string]bool{"hedged": true, "without hedging": false} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := firstAndHedges(reply{status: 200, after: 30 * time.Millisecond}, reply{})
				var rt http.RoundTripper = hedgedAfter20ms(base, 0)
				if !hedged {
					rt = hedgedAfter20ms(base, 0, otelretry.WithHedging(otelretry.Hedging{}))
				}
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(40*time.Millisecond, cancel)
				if status, err := getThrough(t, rt, ctx, "/x"); err != nil || status != 200 {
					t.Errorf("got %d, %v; want the 200 attempt 1 was answered at 30 ms, before the cancellation at 40 ms", status, err)
				}
			})
		})
	}
}

// classifiedFirstOrLast are how long attempt 1's Classifier takes in
// heardFirstRace: classified at 40 ms, before the hedge's 200 (at 65 ms),
// or at 90 ms, after it. The answer that came first is judged first
// either way.
var classifiedFirstOrLast = map[string]time.Duration{"classified_first": 10 * time.Millisecond, "classified_last": 60 * time.Millisecond}

// heardFirstRace: attempt 1 is answered first at 30 ms, its Classifier
// takes classify over it; the hedge, sent at 20 ms, is answered 200 at
// 35 ms, and its Classifier takes 30 ms (classified at 65 ms). It returns
// the status the caller got and the attempts' events.
func heardFirstRace(t *testing.T, first int, classify time.Duration) (int, []event) {
	spans := tracetest.NewSpanRecorder()
	rt := hedgedAfter20ms(firstAndHedges(reply{status: first, after: 30 * time.Millisecond}, reply{status: 200, after: 15 * time.Millisecond}),
		classify, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	status, err := getThrough(t, rt, t.Context(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	var evs []event
	for _, s := range spantest.Attempts(spans.Ended()) {
		evs = append(evs, readEvent(t, s))
	}
	slices.SortFunc(evs, func(a, b event) int { return int(a.Attempt - b.Attempt) })
	return status, evs
}

// A 404 answered first (at 30 ms, the hedge's 200 at 35 ms) is the first
// answer whose verdict is not retry: it wins ("a 404 is the answer,
// whichever attempt brought it"), and is not recorded superseded, though
// the 200's Classifier finishes first.
func TestAStopHeardBeforeTheSuccessWins(t *testing.T) {
	for name, classify := range classifiedFirstOrLast {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				status, evs := heardFirstRace(t, 404, classify)
				if status != 404 || len(evs) != 2 || evs[0].Decision == "superseded" {
					t.Errorf("got %d, attempts %+v; want the 404 attempt 1 was answered first, not superseded", status, evs)
				}
			})
		})
	}
}

// A 503 answered first is the retryable failure it was (retry, in_flight:
// the hedge is still out), not superseded, and the hedge's 200 is returned.
func TestAFailureHeardBeforeTheSuccessIsNotSuperseded(t *testing.T) {
	for name, classify := range classifiedFirstOrLast {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				status, evs := heardFirstRace(t, 503, classify)
				if status != 200 || len(evs) != 2 || evs[0].Decision != "retry" {
					t.Errorf("got %d, attempts %+v; want 200, and attempt 1's 503 recorded retry (in_flight)", status, evs)
				}
			})
		})
	}
}

// docs/budget.md: "A `Retry-After` on any answer other than a 2xx or 3xx
// holds back the retries, never the first attempts, of every operation to
// that host". Operation 1's attempt 1 is answered 503 with Retry-After: 5
// at 30 ms, its hedge 200 at 35 ms; operation 2 (path /b) is answered 503:
// its retry is held, whether the 503's Classifier takes none, 10 ms
// (judged after the 200 was heard) or 60 ms (after the 200's Classifier
// returned).
func TestAPushbackHeardBeforeTheSuccessHoldsTheHost(t *testing.T) {
	for name, other := range map[string]time.Duration{"fast_classifier": 0, "slow_classifier": 10 * time.Millisecond,
		"classified_after_the_success": 60 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				race := firstAndHedges(reply{status: 503, after: 30 * time.Millisecond, header: http.Header{"Retry-After": {"5"}}},
					reply{status: 200, after: 15 * time.Millisecond})
				var secondOp atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.Path != "/b" {
						return race(r)
					}
					status := 200
					if secondOp.Add(1) == 1 {
						status = 503
					}
					return &http.Response{StatusCode: status, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader("b"))}, nil
				})
				rt := hedgedAfter20ms(base, other)
				for _, path := range []string{"/a", "/b"} {
					getThrough(t, rt, t.Context(), path)
				}
				if n := secondOp.Load(); n != 1 {
					t.Errorf("operation 2 made %d attempts; want 1: its retry held by the Retry-After: 5 of operation 1's 503, answered first", n)
				}
			})
		})
	}
}

// A Classifier's pause holds the race's retry as a server's hint does. The
// largest Duration (a classifier's "not before the end of time") overflowed
// the race's hold and was lost: the retry went out at once, where a pause
// of an hour kept it back (the deadline comes first).
func TestAClassifiersLongestPauseHoldsTheRacesRetry(t *testing.T) {
	for _, pause := range []time.Duration{time.Hour, time.Duration(math.MaxInt64)} {
		t.Run(pause.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				base := firstAndHedges(reply{status: 503, after: 40 * time.Millisecond, header: http.Header{"X-Hold": {"forever"}}},
					reply{status: 503, after: 40 * time.Millisecond})
				rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					return base(r)
				}), otelretry.WithoutBudget(), otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithDeadline(2*time.Second),
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithBackoff(otelretry.ConstantBackoff(5*time.Millisecond)),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Header.Get("X-Hold") != "" {
							return otelretry.Retryable(pause)
						}
						return otelretry.Classification{}
					}))
				status, err := getThrough(t, rt, t.Context(), "/items")
				if n := calls.Load(); n != 2 || err != nil || status != 503 {
					t.Errorf("%d calls, then %d, %v; want the first attempt and its hedge, then their 503: the first attempt's Classifier asked for a pause of %v", n, status, err, pause)
				}
			})
		})
	}
}
