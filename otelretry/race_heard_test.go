// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
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

// heardFirstRace: attempt 1 is answered `first` at 30 ms, its Classifier
// takes 10 ms over it (judged at 40 ms); the hedge, sent at 20 ms, is
// answered 200 at 35 ms, and its Classifier takes 30 ms (judged at 65 ms).
// Attempt 1's answer came first, and its verdict is reached first too.
func heardFirstRace(t *testing.T, first int) (int, []event) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
		status, wait := first, 30*time.Millisecond
		if n != 1 {
			status, wait = 200, 15*time.Millisecond
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: status, Header: http.Header{}, Request: r,
			Body: io.NopCloser(strings.NewReader(http.StatusText(status)))}, nil
	})
	tr := otelretry.NewTransport(base,
		otelretry.WithTracerProvider(tp),
		otelretry.WithAttemptHeader("X-Attempt"),
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			if a.StatusCode/100 == 2 {
				time.Sleep(30 * time.Millisecond) // a lookup over a success
			} else {
				time.Sleep(10 * time.Millisecond)
			}
			return otelretry.Classification{}
		}))
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var evs []event
	for _, s := range spantest.Attempts(spans.Ended()) {
		evs = append(evs, readEvent(t, s))
	}
	slices.SortFunc(evs, func(a, b event) int { return int(a.Attempt - b.Attempt) })
	return resp.StatusCode, evs
}

// docs/hedging.md: "The first answer whose verdict is not `retry` wins: a
// success, and also a `stop` (a 404 is the answer, whichever attempt
// brought it)". Attempt 1's 404 came at 30 ms, the hedge's 200 at 35 ms:
// the 404 is the first answer, and its verdict (stop) is even reached
// before the 200's. race.go judge supersedes it because the 200 was heard
// (at 35 ms) before the 404 was judged (at 40 ms).
func TestAStopHeardBeforeTheSuccessWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		status, evs := heardFirstRace(t, 404)
		if status != 404 {
			t.Errorf("got %d; want the 404 attempt 1 was answered first (at 30 ms, the hedge's 200 at 35 ms)", status)
		}
		for _, e := range evs {
			t.Logf("attempt %d: status %d decision %s", e.Attempt, e.Status, e.Decision)
		}
		if len(evs) > 0 && evs[0].Decision == "superseded" {
			t.Errorf("attempt 1, answered first, records superseded (reason other_attempt: \"another attempt answered first\")")
		}
	})
}

// The same race with a 503 first: the 200 is rightly returned, but the 503
// answered first (at 30 ms, before any other answer) is recorded as
// superseded (reason other_attempt: "Another attempt answered first"),
// not as the retryable failure it was (retry, in_flight), and its answer
// is not charged to the budget (operation.go conclude: no cost when
// superseded).
func TestAFailureHeardBeforeTheSuccessIsNotSuperseded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		status, evs := heardFirstRace(t, 503)
		if status != 200 {
			t.Errorf("got %d; want 200", status)
		}
		for _, e := range evs {
			t.Logf("attempt %d: status %d decision %s", e.Attempt, e.Status, e.Decision)
		}
		if len(evs) != 2 || evs[0].Decision != "retry" {
			t.Errorf("attempt 1's 503, the race's first answer, records %q; want retry (in_flight)", evs[0].Decision)
		}
	})
}

// docs/budget.md: "A `Retry-After` on any answer other than a 2xx or 3xx
// holds back the retries, never the first attempts, of every operation to
// that host through this budget until it passes". Operation 1's attempt 1
// is answered first, 503 with Retry-After: 5, at 30 ms; its hedge's 200
// comes at 35 ms. The 503's Classifier takes 10 ms (slowClassifier) or
// none. With a slow one, race.go judge supersedes the 503 (the 200 was
// heard before it was judged), operation.go conclude charges nothing, and
// the host's hold is lost: operation 2's 503 is retried. With a fast one,
// the same answers hold the host.
func TestAPushbackHeardBeforeTheSuccessHoldsTheHost(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast_classifier", true: "slow_classifier"}[slow], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var secondOp atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					h := http.Header{}
					if r.URL.Path == "/b" {
						if secondOp.Add(1) == 1 {
							return &http.Response{StatusCode: 503, Header: h, Request: r, Body: io.NopCloser(strings.NewReader("busy"))}, nil
						}
						return &http.Response{StatusCode: 200, Header: h, Request: r, Body: io.NopCloser(strings.NewReader("ok"))}, nil
					}
					n, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
					status, wait := 503, 30*time.Millisecond
					if n != 1 {
						status, wait = 200, 15*time.Millisecond
					} else {
						h.Set("Retry-After", "5")
					}
					select {
					case <-time.After(wait):
					case <-r.Context().Done():
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: status, Header: h, Request: r,
						Body: io.NopCloser(strings.NewReader(http.StatusText(status)))}, nil
				})
				tr := otelretry.NewTransport(base,
					otelretry.WithAttemptHeader("X-Attempt"),
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						switch {
						case a.StatusCode/100 == 2:
							time.Sleep(30 * time.Millisecond)
						case slow:
							time.Sleep(10 * time.Millisecond)
						}
						return otelretry.Classification{}
					}))
				for _, path := range []string{"/a", "/b"} {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test"+path, nil)
					resp, err := tr.RoundTrip(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
				if n := secondOp.Load(); n != 1 {
					t.Errorf("operation 2 made %d attempts; want 1: its retry held by the Retry-After: 5 of operation 1's 503, answered first", n)
				}
			})
		})
	}
}
