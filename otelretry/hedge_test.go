// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// hedgeAttempt is what a test reads of one attempt span of a hedged
// operation.
type hedgeAttempt struct {
	number          int64
	decision        string
	reason          string
	status          int64
	class           string
	hedgeOf         int64 // 0: absent
	hedgedAfterMs   int64 // -1: absent
	start, end      time.Time
	parentIsTheSame bool
}

// hedgeAttempts reads the attempt spans of h's one operation, by number.
func hedgeAttempts(t *testing.T, h *harness) []hedgeAttempt {
	t.Helper()
	op := h.operation(t)
	var out []hedgeAttempt
	for _, s := range h.attempts() {
		e := readEvent(t, s)
		a := hedgeAttempt{number: e.Attempt, decision: e.Decision, status: e.Status, class: e.ErrorClass,
			reason: attrOf(s, attrs.ReasonKey).AsString(), hedgedAfterMs: -1, start: s.StartTime(), end: s.EndTime(),
			parentIsTheSame: s.Parent().SpanID() == op.SpanContext().SpanID()}
		if v, ok := spantestAttr(s, attrs.HedgeOfKey); ok {
			a.hedgeOf = int64(mustInt(t, v))
		}
		if v, ok := spantestAttr(s, attrs.HedgedAfterMsKey); ok {
			a.hedgedAfterMs = int64(mustInt(t, v))
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b hedgeAttempt) int { return int(a.number - b.number) })
	return out
}

// attemptDecisions are the decisions of h's attempts, by number.
func attemptDecisions(t *testing.T, h *harness) []string {
	t.Helper()
	var out []string
	for _, a := range hedgeAttempts(t, h) {
		out = append(out, a.decision)
	}
	return out
}

func mustInt(t *testing.T, s string) int {
	t.Helper()
	var n int
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// hedgeEvents are the operation span's hedge_sent and hedge_refused
// events, as "name attempt=… of=… delay=… reason=…" lines.
func hedgeEvents(t *testing.T, h *harness) []string {
	t.Helper()
	var out []string
	for _, ev := range h.operation(t).Events() {
		if ev.Name != attrs.EventHedgeSent && ev.Name != attrs.EventHedgeRefused {
			continue
		}
		line := ev.Name
		for _, k := range []attribute.Key{attrs.AttemptKey, attrs.HedgeOfKey, attrs.HedgeDelayMsKey, attrs.ReasonKey} {
			if v, ok := attrValue(ev.Attributes, k); ok {
				line += " " + string(k) + "=" + v
			}
		}
		out = append(out, line)
	}
	return out
}

// roundTrip sends req through h and returns the status and the body read
// whole, or the error; the body is closed.
func roundTrip(t *testing.T, h *harness, req *http.Request) (int, string, error) {
	t.Helper()
	resp, err := h.transprt.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// A slow attempt is hedged after the delay; the hedge answers first and
// wins; the attempt it hedged is canceled, records superseded and when its
// hedge was sent; the hedge records what it hedges. Both are attempt spans
// under the operation span, and the operation counts them both.
func TestHedgeIsSentAfterTheDelayAndTheFirstAnswerWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 100 * time.Millisecond, Status: 200, Body: "slow"},
			{Delay: 5 * time.Millisecond, Status: 200, Body: "hedge"},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond}))
		start := time.Now()
		status, body, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
		if err != nil || status != 200 || body != "hedge" {
			t.Fatalf("got %d %q %v, want the hedge's 200", status, body, err)
		}
		if took := time.Since(start); took != 25*time.Millisecond {
			t.Errorf("the operation took %v, want 25ms: the hedge at 20ms, answered 5ms later", took)
		}
		calls := h.base.Calls()
		if len(calls) != 2 || calls[1].At.Sub(start) != 20*time.Millisecond {
			t.Fatalf("calls = %+v, want the attempt and its hedge 20ms later", calls)
		}
		got := hedgeAttempts(t, h)
		if len(got) != 2 {
			t.Fatalf("%d attempt spans, want 2", len(got))
		}
		first, hedge := got[0], got[1]
		if first.decision != "superseded" || first.reason != "other_attempt" || first.hedgedAfterMs != 20 || first.hedgeOf != 0 {
			t.Errorf("the hedged attempt: %+v, want superseded, other_attempt, hedged after 20ms", first)
		}
		if hedge.number != 2 || hedge.decision != "return" || hedge.hedgeOf != 1 || hedge.hedgedAfterMs != -1 {
			t.Errorf("the hedge: %+v, want attempt 2, return, a hedge of 1", hedge)
		}
		if !first.parentIsTheSame || !hedge.parentIsTheSame {
			t.Error("the attempts' spans are not children of the operation span")
		}
		if !first.end.Before(start.Add(100 * time.Millisecond)) {
			t.Errorf("the hedged attempt ended at +%v: it was not canceled when the hedge won", first.end.Sub(start))
		}
		op := h.operation(t)
		if n := attrOf(op, attrs.AttemptsKey).AsInt64(); n != 2 {
			t.Errorf("the operation counts %d attempts, want 2", n)
		}
		if got, want := hedgeEvents(t, h), []string{"hedge_sent retry.attempt=2 retry.hedge.of=1 retry.hedge.delay_ms=20"}; !slices.Equal(got, want) {
			t.Errorf("operation events = %q, want %q", got, want)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Errorf("%d response bodies left open", n)
		}
	})
}

// An answer before the delay leaves nothing to hedge.
func TestNoHedgeWhenTheAnswerComesBeforeTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 19 * time.Millisecond, Status: 200}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond}))
		if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || status != 200 {
			t.Fatalf("got %d, %v", status, err)
		}
		if n := len(h.base.Calls()); n != 1 {
			t.Errorf("%d calls, want 1", n)
		}
		if ev := hedgeEvents(t, h); len(ev) != 0 {
			t.Errorf("hedge events %q for an answer before the delay", ev)
		}
	})
}

// A retryable failure while a hedge is in flight ends nothing and takes no
// pause: the hedge is the retry (in_flight). When the hedge fails in turn,
// with nothing in flight, it is an ordinary retry, with its pause. A retry
// may be hedged in turn. Hedges and retries share one attempt limit, and
// MaxHedges bounds the operation's hedges.
func TestRetriesAndHedgesCompose(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     []scripted.Step
		calls     []time.Duration
		decisions []string
	}{
		{"a failure while its hedge is in flight, then the hedge's",
			[]scripted.Step{
				{Delay: 30 * time.Millisecond, Status: 503}, // 1: fails while its hedge is in flight
				{Delay: 40 * time.Millisecond, Status: 503}, // 2 (hedge, sent at 20ms): fails at 60ms, alone
				{Delay: 5 * time.Millisecond, Status: 200},  // 3 (after a 10ms pause): no hedge left
			},
			[]time.Duration{0, 20 * time.Millisecond, 70 * time.Millisecond},
			[]string{"retry/in_flight", "retry/retryable_status", "return/response"}},
		{"a retry hedged",
			[]scripted.Step{
				{Delay: 5 * time.Millisecond, Status: 503},   // 1: fails before its hedge delay
				{Delay: 100 * time.Millisecond, Status: 200}, // 2 (after a 10ms pause): slow
				{Delay: 5 * time.Millisecond, Status: 200},   // 3 (hedge of 2, at 35ms): wins
			},
			[]time.Duration{0, 15 * time.Millisecond, 35 * time.Millisecond},
			[]string{"retry/retryable_status", "superseded/other_attempt", "return/response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithMaxAttempts(4), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
				start := time.Now()
				if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || status != 200 {
					t.Fatalf("got %d, %v", status, err)
				}
				var at []time.Duration
				for _, c := range h.base.Calls() {
					at = append(at, c.At.Sub(start))
				}
				if !slices.Equal(at, tc.calls) {
					t.Errorf("calls at %v, want %v", at, tc.calls)
				}
				var got []string
				for _, a := range hedgeAttempts(t, h) {
					got = append(got, a.decision+"/"+a.reason)
				}
				if !slices.Equal(got, tc.decisions) {
					t.Errorf("attempts = %v, want %v", got, tc.decisions)
				}
			})
		})
	}
}

// The attempt limit counts hedges: the last attempt a limit allows may be
// a hedge, and no attempt follows it; once retries took the attempts, no
// hedge delay is armed, and nothing is recorded.
func TestHedgesCountAgainstTheAttemptLimit(t *testing.T) {
	t.Run("a hedge is the last attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{
				{Delay: 50 * time.Millisecond, Status: 503},
				{Delay: 50 * time.Millisecond, Status: 503},
			}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxHedges: 3, MaxShare: 1}),
				otelretry.WithMaxAttempts(2))
			status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
			if err != nil || status != 503 {
				t.Fatalf("got %d, %v; want the last 503", status, err)
			}
			if n := len(h.base.Calls()); n != 2 {
				t.Errorf("%d calls, want 2", n)
			}
			if got, want := attemptDecisions(t, h), []string{"retry", "max_attempts"}; !slices.Equal(got, want) {
				t.Errorf("attempts = %v, want %v", got, want)
			}
			want := []string{"hedge_sent retry.attempt=2 retry.hedge.of=1 retry.hedge.delay_ms=20"}
			if got := hedgeEvents(t, h); !slices.Equal(got, want) {
				t.Errorf("operation events = %q, want %q", got, want)
			}
		})
	})
	t.Run("retries took the attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{
				{Delay: time.Millisecond, Status: 503},
				{Delay: 50 * time.Millisecond, Status: 200},
			}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
				otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
			if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || status != 200 {
				t.Fatalf("got %d, %v", status, err)
			}
			if got := hedgeEvents(t, h); len(got) != 0 {
				t.Errorf("operation events = %q, want none", got)
			}
			if n := len(h.base.Calls()); n != 2 {
				t.Errorf("%d calls, want 2", n)
			}
		})
	})
}

// The operation's one deadline bounds every attempt of the race; the
// attempt that ends the operation records the deadline, the other one is
// superseded, and no hedge is sent once no time is left.
func TestHedgesAreBoundByTheOneDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxHedges: 5, MaxShare: 1}),
			otelretry.WithMaxAttempts(10), otelretry.WithDeadline(50*time.Millisecond))
		start := time.Now()
		_, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		if took := time.Since(start); took != 50*time.Millisecond {
			t.Errorf("RoundTrip returned after %v, want 50ms", took)
		}
		if n := len(h.base.Calls()); n != 3 {
			t.Errorf("%d calls, want 3: at 0, 20 and 40ms", n)
		}
		decisions := attemptDecisions(t, h)
		slices.Sort(decisions)
		if want := []string{"deadline_exceeded", "superseded", "superseded"}; !slices.Equal(decisions, want) {
			t.Errorf("decisions = %v, want %v", decisions, want)
		}
	})
}

// A hedge is admitted by the retry budget as a retry is: a host on hold
// after a Retry-After gets no hedge, and the refusal says why.
func TestHedgeIsRefusedByTheRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: 503, Header: http.Header{"Retry-After": {"10"}}},
			{Delay: 50 * time.Millisecond, Status: 200},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
			otelretry.WithMaxAttempts(2), otelretry.WithDeadline(time.Second))
		// The first operation's 503 puts the host on hold for 10s; its own
		// retry is refused past the deadline.
		if status, _, _ := roundTrip(t, h, get(t, t.Context(), "http://api.test/a")); status != 503 {
			t.Fatalf("first operation: %d, want 503", status)
		}
		h.spans.Reset()
		if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/b")); err != nil || status != 200 {
			t.Fatalf("second operation: %d %v", status, err)
		}
		want := []string{"hedge_refused retry.hedge.of=1 retry.hedge.delay_ms=20 retry.reason=pushback"}
		if got := hedgeEvents(t, h); !slices.Equal(got, want) {
			t.Errorf("operation events = %q, want %q", got, want)
		}
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("%d calls, want 2: no hedge", n)
		}
	})
}

// When every request is slow (a brownout), the dependency's hedge rate
// holds the hedges to MaxShare of its operations, after a burst, and each
// refusal is recorded with its reason. (The retry budget, which bounds
// them too, is off: the rate alone is measured.)
func TestHedgeRateHoldsInABrownout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ops = 400
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}}, otelretry.WithoutBudget(),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.05}))
		sent, refused := 0, 0
		for range ops {
			h.spans.Reset()
			if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
				t.Fatal(err)
			}
			for _, e := range hedgeEvents(t, h) {
				switch {
				case strings.HasPrefix(e, "hedge_sent"):
					sent++
				case strings.HasSuffix(e, "retry.reason=hedge_limit"):
					refused++
				default:
					t.Fatalf("unexpected event %q", e)
				}
			}
		}
		// A burst of 5 (100 operations' worth), then one per 20 operations.
		if want := 5 + ops*5/100; sent < want-1 || sent > want+1 {
			t.Errorf("%d hedges for %d slow operations, want %d (±1)", sent, ops, want)
		}
		if sent+refused != ops || len(h.base.Calls()) != ops+sent {
			t.Errorf("%d sent, %d refused, %d calls, for %d operations", sent, refused, len(h.base.Calls()), ops)
		}
	})
}

// switchableBase answers after 50 ms (or when its context ends) while slow
// is set, at once otherwise.
type switchableBase struct {
	slow  atomic.Bool
	calls atomic.Int64
}

func (b *switchableBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls.Add(1)
	if b.slow.Load() {
		return answerAfter(r, 50*time.Millisecond)
	}
	return answerAfter(r, 0)
}

// answerAfter answers 200 after d, or the request context's error when it
// ends first.
func answerAfter(r *http.Request, d time.Duration) (*http.Response, error) {
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// Operations of one dependency with different shares (an Intent's
// Hedging) earn into one allowance that holds at most the burst of the
// operation that begins (docs/hedging.md): the hedges a larger share saved
// up are no burst for the operations of a smaller one (a reviewer's
// question: the docs did not say how the shares combine).
func TestASmallerShareGetsNoLargerSharesSavedBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &switchableBase{}
		tr := otelretry.NewTransport(base, otelretry.WithoutBudget(),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.05}))
		send := func(ctx context.Context) {
			resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/items"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// 200 fast operations of a share of 1 send no hedge and save up
		// their burst of 100.
		every := otelretry.WithIntent(t.Context(), otelretry.Intent{Hedging: &otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}})
		for range 200 {
			send(every)
		}
		base.calls.Store(0)
		// Then 100 slow operations of the Transport's share: a burst of 5
		// and one hedge per 20 operations, not the 100 saved.
		base.slow.Store(true)
		const ops = 100
		for range ops {
			send(t.Context())
		}
		if hedges, want := int(base.calls.Load())-ops, 5+ops*5/100; hedges < want-1 || hedges > want {
			t.Errorf("%d hedges for %d slow operations of share 0.05, want %d (-1)", hedges, ops, want)
		}
	})
}

// But an operation of a smaller share may send a hedge one of a larger
// share earned just before: the allowance bounds the dependency's load
// (a burst plus what its operations earned), not each share's
// (docs/hedging.md; a reviewer's find: the docs said each share drew on
// its own, which held only for a saved burst).
func TestOperationsOfDifferentSharesShareTheDependencysAllowance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &switchableBase{}
		tr := otelretry.NewTransport(base, otelretry.WithoutBudget(),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.05}))
		every := otelretry.WithIntent(t.Context(), otelretry.Intent{Hedging: &otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}})
		send := func(ctx context.Context, slow bool) {
			base.slow.Store(slow)
			resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/items"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		const n = 100
		for range n {
			send(every, false)      // share 1, fast: earns a hedge, sends none
			send(t.Context(), true) // share 0.05, slow: spends it
		}
		hedges, bound := int(base.calls.Load())-2*n, 100+n*1+n*5/100
		if hedges != n {
			t.Errorf("%d hedges, want %d: each slow operation spends the hedge the fast one before it earned", hedges, n)
		}
		if hedges > bound {
			t.Errorf("%d hedges, over the dependency's bound %d (a burst of 100 plus the shares earned)", hedges, bound)
		}
	})
}

// slowHostBase answers slow.test after 50 ms (or when its context ends),
// counting its calls, and every other host at once.
type slowHostBase struct{ slowCalls atomic.Int64 }

func (b *slowHostBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == "slow.test" {
		b.slowCalls.Add(1)
		return answerAfter(r, 50*time.Millisecond)
	}
	return answerAfter(r, 0)
}

// The hedge rate bounds a dependency's hedges over its first N operations
// at burst + MaxShare × N (docs/hedging.md), however many other hosts the
// Transport talks to in between: a full table of dependencies forgets
// none used within defaultBudgetIdleEviction, so a flood of other hosts
// cannot hand the busy one a fresh burst. (It did: each flood of 10 000
// hosts evicted it, and it came back with 5 hedges more.)
func TestAFloodOfOtherHostsDoesNotRefillADependencysHedges(t *testing.T) {
	for _, budget := range []otelretry.Option{otelretry.WithoutBudget(), otelretry.WithBudget(&otelretry.Budget{})} {
		synctest.Test(t, func(t *testing.T) {
			base := &slowHostBase{}
			tr := otelretry.NewTransport(base, quietOptions(budget,
				otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond}))...)
			do := func(url string) {
				resp, err := tr.RoundTrip(get(t, t.Context(), url))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			slowOps := 0
			for round := range 3 {
				for range 20 {
					do("http://slow.test/items")
					slowOps++
				}
				if round < 2 {
					for i := range 10_000 {
						do(fmt.Sprintf("http://t%d-%d.tenant.test/", round, i))
					}
				}
			}
			hedges, bound := int(base.slowCalls.Load())-slowOps, 5+0.05*float64(slowOps)
			if float64(hedges) > bound {
				t.Errorf("%d hedges over slow.test's %d operations, with floods of other hosts between them; want at most burst + MaxShare × N = %v", hedges, slowOps, bound)
			}
		})
	}
}

// Only requests that are safe to repeat race: a write is never hedged,
// even under an idempotency-key contract; a POST marked repeatable is.
func TestWritesAreNeverHedged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		intent *otelretry.Intent
		key    bool
		calls  int
	}{
		{"POST", nil, false, 1},
		{"POST under an idempotency-key contract", nil, true, 1},
		{"POST marked repeatable", &otelretry.Intent{Repeatable: true}, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Delay: 100 * time.Millisecond, Status: 201}},
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithIdempotencyKeyContract())
				ctx := t.Context()
				if tc.intent != nil {
					ctx = otelretry.WithIntent(ctx, *tc.intent)
				}
				req := post(t, ctx, "http://api.test/orders", `{"sku":1}`)
				if tc.key {
					req.Header.Set("Idempotency-Key", "k-1")
				}
				if _, _, err := roundTrip(t, h, req); err != nil {
					t.Fatal(err)
				}
				if n := len(h.base.Calls()); n != tc.calls {
					t.Errorf("%d calls, want %d", n, tc.calls)
				}
				for _, c := range h.base.Calls() {
					if string(c.Body) != `{"sku":1}` {
						t.Errorf("a call carried body %q", c.Body)
					}
				}
			})
		})
	}
}

// TestARequestWhoseBodyFillsItsTrailersIsNotHedged: net/http lets a body
// set the values of the request's declared trailers as it is read, and
// every attempt sends the caller's Trailer map: a hedge would have
// net/http read it while the first attempt's body writes it (a data race,
// "concurrent map read and map write"). Such a request is not hedged, and
// its trailer reaches the server.
func TestARequestWhoseBodyFillsItsTrailersIsNotHedged(t *testing.T) {
	var served atomic.Int32
	var trailer atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		trailer.Store(r.Trailer.Get("X-Sum"))
		served.Add(1)
		time.Sleep(200 * time.Millisecond) // past the hedge's delay
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	tr := otelretry.NewTransport(base, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
	req, _ := http.NewRequestWithContext(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), http.MethodPost, srv.URL, nil)
	req.Body = &trailerFillingBody{req: req, wait: 60 * time.Millisecond}
	req.ContentLength = -1
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("abc")), nil }
	req.Trailer = http.Header{"X-Sum": nil}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n, got := served.Load(), trailer.Load(); n != 1 || got != "sum-of-abc" {
		t.Errorf("the server served %d requests, the last with trailer %q; want 1, %q", n, got, "sum-of-abc")
	}
}

// TestARequestThatSwitchesProtocolsIsNotHedged: a request asking to
// switch protocols (an Upgrade field, "upgrade" among its Connection
// options: a websocket handshake) is answered by a connection of its own,
// so a hedge would open a second one at the server. Such a request is not
// hedged, however its Connection field spells the option; an Upgrade field
// the Connection field does not name asks for no switch, and is hedged as
// any GET.
func TestARequestThatSwitchesProtocolsIsNotHedged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		calls  int
	}{
		{"websocket", http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}, 1},
		{"among options", http.Header{"Connection": {"keep-alive, \tupgrade "}, "Upgrade": {"h2c"}}, 1},
		{"second field", http.Header{"Connection": {"keep-alive", "UPGRADE"}, "Upgrade": {"websocket"}}, 1},
		{"lower case", http.Header{"connection": {"upgrade"}, "upgrade": {"websocket"}}, 1}, // net/http sends the map's spelling
		{"mixed", http.Header{"Connection": {"Upgrade"}, "upgrade": {"websocket"}}, 1},
		{"upgrade not named", http.Header{"Connection": {"keep-alive"}, "Upgrade": {"websocket"}}, 2},
		{"empty upgrade", http.Header{"Connection": {"upgrade"}, "Upgrade": {""}}, 2},
		{"no upgrade", http.Header{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{
					{Delay: 100 * time.Millisecond, Status: 200, Body: "slow"},
					{Delay: 5 * time.Millisecond, Status: 200, Body: "hedge"},
				}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
				req := get(t, t.Context(), "http://api.test/socket")
				req.Header = tc.header
				if _, _, err := roundTrip(t, h, req); err != nil {
					t.Fatal(err)
				}
				if n := len(h.base.Calls()); n != tc.calls {
					t.Errorf("%d calls, want %d", n, tc.calls)
				}
			})
		})
	}
}

// TestARequestThatSwitchesProtocolsIsRetried: docs/hedging.md says such a
// request, never hedged, is retried as its method is: a GET answered 503
// is sent again, with its Upgrade fields.
func TestARequestThatSwitchesProtocolsIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200, Body: "ok"}})
		req := get(t, t.Context(), "http://api.test/socket")
		req.Header = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}
		if status, _, err := roundTrip(t, h, req); err != nil || status != 200 {
			t.Fatalf("got %d, %v; want the retry's 200", status, err)
		}
		calls := h.base.Calls()
		if len(calls) != 2 {
			t.Fatalf("%d calls, want 2", len(calls))
		}
		for i, c := range calls {
			if c.Header.Get("Upgrade") != "websocket" || c.Header.Get("Connection") != "Upgrade" {
				t.Errorf("call %d carried Upgrade %q, Connection %q", i+1, c.Header.Get("Upgrade"), c.Header.Get("Connection"))
			}
		}
	})
}

// TestAHedgeItsPreparationMadeSwitchProtocolsIsNotSent: the prepared
// request is the one the policy judges; a PrepareAttemptFunc that makes a
// request ask to switch protocols gets its attempt sent, and no hedge
// (refused, reason prepare_failed, as a hedge whose preparation failed),
// the attempt's answer returned when it comes.
func TestAHedgeItsPreparationMadeSwitchProtocolsIsNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		upgrade := func(r *http.Request, _ int) error {
			r.Header["connection"] = []string{"Upgrade"}
			r.Header["upgrade"] = []string{"websocket"}
			return nil
		}
		h := newHarness(t, []scripted.Step{
			{Delay: 100 * time.Millisecond, Status: 200, Body: "slow"},
			{Delay: 5 * time.Millisecond, Status: 200, Body: "hedge"},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}), otelretry.WithPrepareAttempt(upgrade))
		status, body, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/socket"))
		if err != nil || status != 200 || body != "slow" {
			t.Fatalf("got %d %q %v, want the attempt's 200", status, body, err)
		}
		if n := len(h.base.Calls()); n != 1 {
			t.Errorf("%d calls, want 1", n)
		}
		if got, want := hedgeEvents(t, h), []string{"hedge_refused retry.hedge.of=1 retry.hedge.delay_ms=20 retry.reason=prepare_failed"}; !slices.Equal(got, want) {
			t.Errorf("operation events = %q, want %q", got, want)
		}
	})
}

// trailerFillingBody sends "abc", then, after wait, sets its request's
// trailer and ends, as net/http's Request.Trailer lets a body do.
type trailerFillingBody struct {
	req  *http.Request
	sent bool
	wait time.Duration
}

func (b *trailerFillingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "abc"), nil
	}
	time.Sleep(b.wait)
	b.req.Trailer["X-Sum"] = []string{"sum-of-abc"}
	return 0, io.EOF
}

func (b *trailerFillingBody) Close() error { return nil }

// A body that cannot be replayed is not hedged, and the refusal says why.
func TestHedgeOfABodyThatCannotBeReplayedIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 100 * time.Millisecond, Status: 200}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}), otelretry.WithBodyBuffer(0, 0))
		req := post(t, otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), "http://api.test/search", "q")
		req.GetBody = nil
		req.Body = io.NopCloser(strings.NewReader("q"))
		if _, _, err := roundTrip(t, h, req); err != nil {
			t.Fatal(err)
		}
		want := []string{"hedge_refused retry.hedge.of=1 retry.hedge.delay_ms=10 retry.reason=not_replayable"}
		if got := hedgeEvents(t, h); !slices.Equal(got, want) {
			t.Errorf("operation events = %q, want %q", got, want)
		}
	})
}

// The adaptive delay follows the dependency's time to response headers:
// the longest answer seen until 20 answers were seen, then their p95,
// found by itself.
func TestAdaptiveDelayFindsTheDependencysP95(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One operation in 20 is slow (200ms) on its first call only, as
		// when a hedge lands on another replica; the others take 10ms.
		var mu sync.Mutex
		called := map[string]bool{}
		base := answersAfter(func(r *http.Request) time.Duration {
			mu.Lock()
			first := !called[r.URL.RawQuery]
			called[r.URL.RawQuery] = true
			mu.Unlock()
			d := 10 * time.Millisecond
			if n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.RawQuery, "op=")); first && n%20 == 19 {
				d = 200 * time.Millisecond
			}
			return d
		})
		rec, opts := tracingProviders()
		tr := otelretry.NewTransport(base, append(opts, otelretry.WithHedging(otelretry.Hedging{Adaptive: true, MaxDelay: 500 * time.Millisecond, MaxShare: 1}))...)
		var delays []string
		for i := range 200 {
			rec.Reset()
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items?op="+strconv.Itoa(i)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for _, op := range spantest.Operations(rec.Ended()) {
				for _, ev := range op.Events() {
					if ev.Name != attrs.EventHedgeSent {
						continue
					}
					d, _ := attrValue(ev.Attributes, attrs.HedgeDelayMsKey)
					delays = append(delays, d)
				}
			}
		}
		if len(delays) < 5 {
			t.Fatalf("%d hedges, want one for each slow operation after the first 20: %v", len(delays), delays)
		}
		for _, d := range delays {
			// The p95 of answers at 10ms (the slow ones are answered by
			// their hedge), read as the upper bound of its bucket: at most
			// 20% above.
			if n := mustInt(t, d); n < 10 || n > 12 {
				t.Errorf("adaptive delay %sms, want the p95 of 10ms (10–12ms)", d)
			}
		}
	})
}

// The caller canceling during a race, or the deadline passing, ends it:
// every attempt in flight is canceled and recorded, nothing is left open.
// The attempt judged first records the end; the others, superseded, say
// that no attempt won (operation_ended), so that no hedge is counted as
// having discarded their work.
func TestCallerCancelingEndsTheRace(t *testing.T) {
	for _, end := range []string{"cancel", "caller's deadline", "WithDeadline"} {
		t.Run(end, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxHedges: 2, MaxShare: 1}),
					otelretry.WithMaxAttempts(5)}
				ctx := t.Context()
				var cancel context.CancelFunc
				want := []string{"canceled", "superseded", "superseded"}
				switch end {
				case "cancel":
					ctx, cancel = context.WithCancel(ctx)
					time.AfterFunc(25*time.Millisecond, cancel)
				case "caller's deadline":
					ctx, cancel = context.WithTimeout(ctx, 25*time.Millisecond)
					want[0] = "deadline_exceeded"
				default:
					cancel = func() {}
					opts = append(opts, otelretry.WithDeadline(25*time.Millisecond))
					want[0] = "deadline_exceeded"
				}
				defer cancel()
				h := newHarness(t, []scripted.Step{{Hang: true}}, opts...)
				_, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items"))
				if err == nil {
					t.Fatal("the race ended with no error")
				}
				var decisions, superseded []string
				wantClass := "timeout"
				if end == "cancel" {
					wantClass = "canceled"
				}
				for _, a := range hedgeAttempts(t, h) {
					decisions = append(decisions, a.decision)
					if a.decision == "superseded" {
						superseded = append(superseded, a.reason)
					}
					if a.class != wantClass { // never race_lost: no attempt won
						t.Errorf("attempt %d: class %s, want %s: the operation's end cut it", a.number, a.class, wantClass)
					}
				}
				slices.Sort(decisions)
				if !slices.Equal(decisions, want) {
					t.Errorf("decisions = %v, want %v", decisions, want)
				}
				if !slices.Equal(superseded, []string{"operation_ended", "operation_ended"}) {
					t.Errorf("superseded attempts' reasons = %v, want operation_ended: no attempt won", superseded)
				}
			})
		})
	}
}

// A hedge whose base panics takes the operation down as the attempt
// would, after the other attempt was canceled and ended: every span ends,
// no goroutine is left (TestMain's goleak).
func TestPanicInAHedgeEndsTheRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}, {Delay: time.Millisecond, Panic: "base broke"}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		func() {
			defer func() {
				if r := recover(); r != "base broke" {
					t.Errorf("recovered %v, want the base's panic", r)
				}
			}()
			_, _, _ = roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
		}()
		synctest.Wait()
		if started, ended := len(h.spans.Started()), len(h.ended()); started != 3 || ended != 3 {
			t.Errorf("%d spans started, %d ended; want the operation's and two attempts', all ended", started, ended)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Errorf("%d response bodies left open", n)
		}
	})
}

// The user's code that a hedge's launch runs (the attempt span's name
// formatter and the tracer's span processors, under WithoutClientSpans)
// ends the race as a panic in any other hook of a race does: a panic goes
// on in the caller, a runtime.Goexit (t.FailNow in a formatter) ends the
// caller's goroutine. Before, both ran outside the hedge goroutine's
// recovery: the panic ended the process, and after a Goexit the race
// waited forever for the hedge it had counted as sent.
func TestAHedgesLaunchThatPanicsOrExitsEndsTheRace(t *testing.T) {
	for name, fail := range map[string]func(){
		"panic":  func() { panic("formatter broke") },
		"Goexit": runtime.Goexit,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var named atomic.Int32
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
					otelretry.WithoutClientSpans(),
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string {
						if named.Add(1) == 2 { // the hedge's span
							fail()
						}
						return r.Method
					}))
				// It ends (before, never: synctest reported the race's loop
				// blocked for good).
				returned, recovered := onAGoroutine(func() { _, _, _ = roundTrip(t, h, get(t, context.Background(), "http://api.test/items")) })
				synctest.Wait()
				if returned {
					t.Fatal("RoundTrip returned; want the hedge's panic or Goexit to go on in the caller")
				}
				if want := map[string]any{"panic": "formatter broke", "Goexit": nil}[name]; recovered != want {
					t.Errorf("recovered %v, want %v", recovered, want)
				}
				if started, ended := len(h.spans.Started()), len(h.ended()); started != ended {
					t.Errorf("%d spans started, %d ended; want every one ended", started, ended)
				}
				if n := h.base.OpenBodies(); n != 0 {
					t.Errorf("%d response bodies left open", n)
				}
			})
		})
	}
}

// The losers' decisions reach every channel: the log records (at info:
// losing is no error) and the attempts metric by decision.
func TestSupersededReachesTheLogsAndTheMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logs := newLogHarness(t, []scripted.Step{
			{Delay: 100 * time.Millisecond, Status: 200},
			{Delay: 5 * time.Millisecond, Status: 200},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
		if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, rec := range logs.named(attrs.LogEventAttempt) {
			a := recordAttrs(rec)
			line := a[attrs.DecisionKey].AsString() + " " + rec.Severity().String()
			if of, ok := a[attrs.HedgeOfKey]; ok {
				line += " of=" + of.Emit()
			}
			if after, ok := a[attrs.HedgedAfterMsKey]; ok {
				line += " after=" + after.Emit()
			}
			seen = append(seen, line)
		}
		slices.Sort(seen)
		if want := []string{"return INFO of=1", "superseded INFO after=20"}; !slices.Equal(seen, want) {
			t.Errorf("attempt records = %q, want %q", seen, want)
		}
		if got := sumBy(t, h.collect(t), "retry.attempts", attrs.DecisionKey); got["superseded"] != 1 || got["return"] != 1 {
			t.Errorf("attempts by decision = %v, want one superseded and one return", got)
		}
	})
}

// On loopback, under -race: a thousand hedged operations with random
// cancellations leave no response body open and no goroutine running
// (TestMain's goleak), and every operation ends with one answer or one
// error.
func TestHedgedOperationsOnLoopbackLeaveNothingOpen(t *testing.T) {
	const ops, workers = 1000, 8
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := time.Duration(rand.IntN(500)) * time.Microsecond
		if rand.IntN(20) == 0 {
			d = 20 * time.Millisecond // the tail, which the hedges cut
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		if rand.IntN(10) == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = io.WriteString(w, strings.Repeat("x", rand.IntN(8192)))
	}))
	defer srv.Close()
	base := &countingBodies{base: srv.Client().Transport}
	defer srv.Client().CloseIdleConnections()
	tr := otelretry.NewTransport(base, otelretry.WithHedging(otelretry.Hedging{Delay: 2 * time.Millisecond, MaxHedges: 2, MaxShare: 1}),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget(), otelretry.WithDeadline(2*time.Second))
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= ops {
				ctx, cancel := context.WithCancel(context.Background())
				if rand.IntN(4) == 0 {
					time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := client.Do(req)
				if (resp == nil) == (err == nil) {
					t.Errorf("resp %v and err %v", resp, err)
				}
				if resp != nil {
					if rand.IntN(2) == 0 {
						_, _ = io.Copy(io.Discard, resp.Body)
					}
					resp.Body.Close()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	if open, opened := base.open.Load(), base.opened.Load(); open != 0 || opened < ops/2 {
		t.Errorf("%d of %d response bodies left open", open, opened)
	}
	tr.CloseIdleConnections()
}

// countingBodies counts the response bodies its base returned and those
// still open.
type countingBodies struct {
	base         http.RoundTripper
	open, opened atomic.Int64
}

func (c *countingBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		c.open.Add(1)
		c.opened.Add(1)
		resp.Body = &countedClose{ReadCloser: resp.Body, open: &c.open}
	}
	return resp, err
}

type countedClose struct {
	io.ReadCloser
	open *atomic.Int64
	once sync.Once
}

func (b *countedClose) Close() error {
	b.once.Do(func() { b.open.Add(-1) })
	return b.ReadCloser.Close()
}

// Losing is no error: the attempt span otelretry makes for an attempt that
// was superseded keeps an unset status, though it was canceled.
func TestSupersededAttemptSpanHasNoErrorStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 100 * time.Millisecond, Status: 200},
			{Delay: 5 * time.Millisecond, Status: 200},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}), otelretry.WithoutClientSpans())
		if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
			t.Fatal(err)
		}
		for _, s := range h.attempts() {
			if d := attrOf(s, attrs.DecisionKey).AsString(); d == "superseded" && s.Status().Code != codes.Unset {
				t.Errorf("the superseded attempt's span has status %v %q", s.Status().Code, s.Status().Description)
			}
		}
		if n := len(h.attempts()); n != 2 {
			t.Errorf("%d attempt spans, want 2", n)
		}
	})
}

// A panic that comes after the race has its winner (here the Classifier,
// asked about the attempt that lost) goes on to the caller, and the
// winner's response, which the caller never gets, is closed: no body is
// left open and every span ends.
func TestPanicAfterTheWinnerClosesTheWinnersResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 100 * time.Millisecond, Status: 200, Body: "slow"},
			{Delay: 5 * time.Millisecond, Status: 200, Body: "hedge"},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Attempt == 1 { // the loser, canceled once the hedge won
					panic("classifier broke")
				}
				return otelretry.Classification{}
			}))
		func() {
			defer func() {
				if r := recover(); r != "classifier broke" {
					t.Errorf("recovered %v, want the classifier's panic", r)
				}
			}()
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			if err == nil {
				resp.Body.Close()
			}
			t.Error("RoundTrip returned; want the classifier's panic")
		}()
		synctest.Wait()
		if n := h.base.OpenBodies(); n != 0 {
			t.Errorf("%d response bodies left open: the winner's response was never closed", n)
		}
		if started, ended := len(h.spans.Started()), len(h.ended()); started != ended {
			t.Errorf("%d spans started, %d ended", started, ended)
		}
	})
}

// The same, when the panic comes from closing the loser's response: its
// base answered after the winner (it ignores its canceled context), and
// its body's Close panics.
func TestPanicDiscardingTheLoserClosesTheWinnersResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var winnerClosed atomic.Int32
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch calls.Add(1) {
			case 1: // answers at 30ms, first
				time.Sleep(30 * time.Millisecond)
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
					Body: &closeHook{Reader: strings.NewReader("one"), close: func() { winnerClosed.Add(1) }}}, nil
			default: // the hedge, sent at 20ms, ignores its cancellation and answers at 40ms
				time.Sleep(20 * time.Millisecond)
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
					Body: &closeHook{Reader: strings.NewReader("two"), close: func() { panic("close broke") }}}, nil
			}
		})
		rec, opts := tracingProviders()
		tr := otelretry.NewTransport(base, append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))...)
		func() {
			defer func() { _ = recover() }()
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			if err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		if winnerClosed.Load() != 1 {
			t.Errorf("the winner's response body was closed %d times, want once", winnerClosed.Load())
		}
		if started, ended := len(rec.Started()), len(rec.Ended()); started != ended {
			t.Errorf("%d spans started, %d ended", started, ended)
		}
	})
}

// closeHook is a response body that calls close when it is closed.
type closeHook struct {
	io.Reader
	close func()
}

func (b *closeHook) Close() error { b.close(); return nil }

// The hedge's preparation (a PrepareAttemptFunc that fetches a token, a GetBody
// that reads a file again) does not hold back the answer of the attempt
// it hedges: the first attempt answers while its hedge is being prepared,
// and RoundTrip returns that answer without waiting for the preparation
// to end. The preparation here ends only when RoundTrip returned, or at
// the operation's deadline (2s), which it must not need.
func TestHedgePreparationDoesNotHoldBackTheAnswerThatCame(t *testing.T) {
	for _, hook := range []string{"PrepareAttemptFunc", "GetBody"} {
		t.Run(hook, func(t *testing.T) {
			preparing, returned, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var releasedBy atomic.Value
			// wait is the hedge's preparation: it ends when RoundTrip returned,
			// when its context is canceled (the race was won), or at the
			// deadline, which says RoundTrip waited for it.
			wait := func(ctx context.Context) {
				close(preparing)
				select {
				case <-returned:
					releasedBy.Store("RoundTrip returned")
				case <-ctx.Done():
					releasedBy.Store(ctx.Err().Error())
				}
				close(ended)
			}
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if calls.Add(1) == 1 {
					<-preparing // the first attempt answers while its hedge is prepared
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			opts := []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}),
				otelretry.WithDeadline(2 * time.Second)}
			req := get(t, t.Context(), "http://api.test/items")
			if hook == "PrepareAttemptFunc" {
				opts = append(opts, otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
					if attempt == 2 {
						wait(r.Context())
					}
					return nil
				}))
			} else {
				req = post(t, otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), "http://api.test/search", "q")
				req.GetBody = func() (io.ReadCloser, error) {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					defer cancel()
					wait(ctx)
					return io.NopCloser(strings.NewReader("q")), nil
				}
			}
			tr := otelretry.NewTransport(base, opts...)
			resp, err := tr.RoundTrip(req)
			close(returned)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			<-ended // the preparation ends on its own, after RoundTrip returned
			if by := releasedBy.Load(); by != "RoundTrip returned" && by != context.Canceled.Error() {
				t.Errorf("the hedge's %s ended on %v: RoundTrip waited for it, holding the answer that came", hook, by)
			}
		})
	}
}

// The call a retry planned after a race, and that was not made, is
// numbered after every attempt the race made: the race's retry came from
// attempt 1 (its hedge, attempt 2, failed first, while 1 was in flight),
// so the call it planned is attempt 3, not a second attempt 2.
func TestCallAbandonedAfterARaceIsNumberedAfterItsHedges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 30 * time.Millisecond, Status: 503}, // 1: the race's last failure, at 30ms
			{Delay: 5 * time.Millisecond, Status: 503},  // 2 (hedge, at 20ms): fails at 25ms, while 1 is in flight
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
			otelretry.WithMaxAttempts(5), otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel) // during the retry's pause
		if _, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items")); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
		var numbers []string
		for _, a := range hedgeAttempts(t, h) {
			numbers = append(numbers, strconv.Itoa(int(a.number))+" "+a.decision+"/"+a.reason)
		}
		if want := []string{"1 retry/retryable_status", "2 retry/in_flight"}; !slices.Equal(numbers, want) {
			t.Fatalf("attempts = %q, want %q", numbers, want)
		}
		op := h.operation(t)
		for _, e := range op.Events() {
			if e.Name == attrs.EventAttemptAbandoned {
				if n, _ := attrValue(e.Attributes, attrs.AttemptKey); n != "3" {
					t.Errorf("the abandoned call is numbered %s, want 3: attempt 2 was made", n)
				}
			}
		}
		if n := attrOf(op, attrs.AbandonedAttemptKey).AsInt64(); n != 3 {
			t.Errorf("the operation's abandoned attempt is %d, want 3", n)
		}
	})
}

// MaxHedges is "how many hedges one operation may send" (Hedging's doc):
// once the operation's one hedge was sent, the attempt after a retry is
// not hedged again. Nothing is refused there, since nothing was asked: no
// hedge delay is armed once the operation may send no more hedges, and
// hedge_limit is the dependency's rate's alone. The same holds once no
// attempt is left: the last attempt waits for its answer, unhedged.
func TestMaxHedgesBoundsTheHedgesOfTheOperation(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		maxHedges, maxAttempts int
		hedge                  time.Duration
	}{
		// 1 fails at 30ms while its hedge (at 20ms) is in flight; the hedge
		// fails at 60ms; 3, after a 10ms pause, is slow, and not hedged.
		{"MaxHedges spent", 1, 4, 40 * time.Millisecond},
		// The hedge fails at 25ms, 1 at 30ms; 3, at 40ms, is the last.
		{"no attempt left", 2, 3, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{
					{Delay: 30 * time.Millisecond, Status: 503},
					{Delay: tc.hedge, Status: 503},
					{Delay: 50 * time.Millisecond, Status: 200},
				}, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxHedges: tc.maxHedges, MaxShare: 1}),
					otelretry.WithMaxAttempts(tc.maxAttempts), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
				if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || status != 200 {
					t.Fatalf("got %d, %v", status, err)
				}
				if n := len(h.base.Calls()); n != 3 {
					t.Errorf("%d calls, want 3: one hedge for the operation", n)
				}
				want := []string{"hedge_sent retry.attempt=2 retry.hedge.of=1 retry.hedge.delay_ms=20"}
				if got := hedgeEvents(t, h); !slices.Equal(got, want) {
					t.Errorf("operation events = %q, want %q", got, want)
				}
			})
		})
	}
}

// MaxHedges takes any value of 0 or more (WithHedging refuses only
// negative ones), and the attempt limit bounds what it allows: a value
// meant as "as many as the attempt limit allows" neither crashes
// RoundTrip nor makes it reserve memory for hedges it may never send.
// (1<<40 is not tried: it ends the test binary with a fatal out of
// memory error, which no recover catches.)
func TestAHugeMaxHedgesIsBoundedByTheAttemptLimit(t *testing.T) {
	for _, max := range []int{1 << 20, math.MaxInt} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Delay: 100 * time.Millisecond, Status: 200}},
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxHedges: max, MaxShare: 1}),
					otelretry.WithMaxAttempts(3))
				var status int
				var err error
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("RoundTrip panicked: %v", r)
						}
					}()
					status, _, err = roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
				}()
				runtime.ReadMemStats(&after)
				if err != nil || status != 200 {
					t.Fatalf("got %d %v", status, err)
				}
				if n := len(h.base.Calls()); n != 3 {
					t.Errorf("%d calls, want 3: the attempt limit", n)
				}
				if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
					t.Errorf("one operation of 3 attempts allocated %d MiB", n>>20)
				}
			})
		})
	}
}

// A panic in the telemetry that records a hedge sent (a TracerProvider
// whose span panics in AddEvent) goes on to the caller, as any telemetry
// panic does, after the race was cleaned up: RoundTrip does not hang
// waiting for the hedge, which was counted in flight and never sent.
func TestPanicRecordingAHedgeDoesNotHangTheOperation(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := &eventPanics{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), event: attrs.EventHedgeSent}
	h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}},
		otelretry.WithHedging(otelretry.Hedging{Delay: 5 * time.Millisecond, MaxShare: 1}), otelretry.WithTracerProvider(tp))
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		resp, err := h.transprt.RoundTrip(get(t, context.Background(), "http://api.test/items"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case r := <-done:
		if r != "span broke" {
			t.Errorf("recovered %v, want the span's panic", r)
		}
	case <-time.After(10 * time.Second): // a guard against the hang, not a measure
		t.Fatal("RoundTrip has not returned 10s after the span panicked: it waits for a hedge that was never sent")
	}
}

// eventPanics is a TracerProvider whose spans panic when they are given
// the named event.
type eventPanics struct {
	trace.TracerProvider
	event string
}

func (p *eventPanics) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return eventPanicsTracer{Tracer: p.TracerProvider.Tracer(name, opts...), event: p.event}
}

type eventPanicsTracer struct {
	trace.Tracer
	event string
}

func (t eventPanicsTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	span := eventPanicsSpan{Span: s, event: t.event}
	return trace.ContextWithSpan(ctx, span), span
}

type eventPanicsSpan struct {
	trace.Span
	event string
}

func (s eventPanicsSpan) AddEvent(name string, opts ...trace.EventOption) {
	if name == s.event {
		panic("span broke")
	}
	s.Span.AddEvent(name, opts...)
}

// The adaptive delay finds the dependency's p95 by itself, also when its
// latency has a heavy tail (Pareto, from 5ms, alpha 1.2: a p95 of 61ms),
// and so hedges about 5% of the operations. The attempts superseded by
// their hedge are the slowest ones; leaving them out of the sketch
// altogether, with nothing in their place, drags the quantile down
// operation after operation.
func TestAdaptiveDelayFindsTheP95OfAHeavyTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ops = 1500
		pareto := func(u float64) time.Duration {
			return min(time.Duration(float64(5*time.Millisecond)*math.Pow(u, -1/1.2)), 10*time.Second)
		}
		truth := pareto(0.05) // the p95
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(36, 36))
		base := answersAfter(func(r *http.Request) time.Duration {
			mu.Lock()
			d := pareto(1 - rng.Float64())
			mu.Unlock()
			return d
		})
		rec, opts := tracingProviders()
		tr := otelretry.NewTransport(base, append(opts, otelretry.WithoutBudget(),
			otelretry.WithHedging(otelretry.Hedging{Adaptive: true, MaxDelay: 5 * time.Second, MaxShare: 1}))...)
		var delays []int
		hedged := 0
		for i := range ops {
			rec.Reset()
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for _, op := range spantest.Operations(rec.Ended()) {
				for _, ev := range op.Events() {
					if ev.Name == attrs.EventHedgeSent && i >= ops/2 {
						d, _ := attrValue(ev.Attributes, attrs.HedgeDelayMsKey)
						delays = append(delays, mustInt(t, d))
						hedged++
					}
				}
			}
		}
		slices.Sort(delays)
		median := time.Duration(delays[len(delays)/2]) * time.Millisecond
		// The sketch answers the upper bound of the bucket holding the p95 of
		// what it holds, up to 20% above it; that p95, of about 2,000 draws
		// of this tail, is within about 10% of the true one. Without the cut
		// attempts, the delay fell to 34ms.
		if lo, hi := truth*85/100, truth*135/100; median < lo || median > hi {
			t.Errorf("adaptive delay %v (median of the last %d operations), want the p95, %v, to %v", median, ops/2, truth.Round(time.Millisecond), hi.Round(time.Millisecond))
		}
		if share := float64(hedged) / (ops / 2); share > 0.07 {
			t.Errorf("%.1f%% of the operations hedged, want about 5%% (the p95)", 100*share)
		}
	})
}

// An attempt cut once its hedge won tells only that it took at least the
// delay its hedge was sent after. A dependency whose first requests stall
// while their hedges win keeps its delay within twice the winners' p95:
// the stalled attempts, cut at the delay plus the hedge's time, do not
// raise it round after round. Here 40 answers of 2 ms set the delay, then
// 80 operations' first requests stall (150 ms) and their hedges answer in
// 2 ms.
func TestAdaptiveDelayDoesNotClimbOnTheAttemptsItCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays, _ := stalledFirstRequests(t, 0)
		// The winners' p95, as the sketch reads it: the upper bound of the
		// bucket of 2ms, 2.2ms.
		if len(delays) < 80 || slices.Max(delays) > 4 {
			t.Errorf("%d of 80 operations hedged, after delays up to %dms; want every one, within 4ms (twice the winners' p95)", len(delays), slices.Max(delays))
		}
	})
}

// A hedge that is refused at its preparation (its PrepareAttemptFunc failed, or
// its body could not be had) was never sent, and takes nothing from the
// dependency's hedge rate: the next slow operation still has the hedge the
// rate allows.
func TestAHedgeRefusedAtItsPreparationTakesNoHedgeFromTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var prepared atomic.Int32
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}},
			// A burst of one hedge, and a hundred operations to earn another.
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01}),
			otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
				if attempt == 2 && prepared.Add(1) == 1 {
					return errors.New("signer unavailable") // the first operation's hedge only
				}
				return nil
			}))
		if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/a")); err != nil {
			t.Fatal(err)
		}
		want := []string{"hedge_refused retry.hedge.of=1 retry.hedge.delay_ms=10 retry.reason=prepare_failed"}
		if got := hedgeEvents(t, h); !slices.Equal(got, want) {
			t.Fatalf("first operation's events = %q, want %q", got, want)
		}
		h.spans.Reset()
		if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/b")); err != nil {
			t.Fatal(err)
		}
		want = []string{"hedge_sent retry.attempt=2 retry.hedge.of=1 retry.hedge.delay_ms=10"}
		if got := hedgeEvents(t, h); !slices.Equal(got, want) {
			t.Errorf("second operation's events = %q, want %q: the first one sent no hedge", got, want)
		}
	})
}

// Under WithOperationID, attempt numbers count on across the operation's
// attempts with no gap (retryinspect reports a gap as attempt-numbering):
// a hedge refused at its preparation was never made, and the retry that
// follows takes the number it would have had.
func TestAHedgeRefusedAtItsPreparationLeavesNoGapInTheNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var prepared []int
		h := newHarness(t, []scripted.Step{
			{Delay: 50 * time.Millisecond, Status: 503},
			{Status: 200},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
				prepared = append(prepared, attempt)
				if len(prepared) == 2 {
					return errors.New("signer unavailable") // the hedge
				}
				return nil
			}))
		ctx := otelretry.WithOperationID(t.Context(), "op-36")
		if status, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items")); err != nil || status != 200 {
			t.Fatalf("got %d %v", status, err)
		}
		var numbers []int64
		for _, a := range hedgeAttempts(t, h) {
			numbers = append(numbers, a.number)
		}
		if want := []int64{1, 2}; !slices.Equal(numbers, want) {
			t.Errorf("attempt numbers %v (PrepareAttemptFunc asked for %v), want %v", numbers, prepared, want)
		}
	})
}

// "Hedges cost budget tokens like retries do" (issue 36); "counts against
// ... the retry budget" (docs/hedging.md). With the hedge rate out of the
// way (MaxShare 1), a brownout where every answer is slow but succeeds
// spends the retry budget with each hedge, and the budget, as it does for
// retries, ends up refusing some. Today a hedge is only admitted, never
// charged: every one of the operations sends one.
func TestHedgesSpendTheRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ops = 100
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithBudget(&otelretry.Budget{}))
		refused := 0
		for range ops {
			h.spans.Reset()
			if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
				t.Fatal(err)
			}
			for _, e := range hedgeEvents(t, h) {
				if strings.HasSuffix(e, "retry.reason=budget") {
					refused++
				}
			}
		}
		if sent := len(h.base.Calls()) - ops; refused == 0 {
			t.Errorf("%d hedges for %d slow operations, none refused by the retry budget: hedges do not spend it", sent, ops)
		}
	})
}

// An attempt that lost the race was canceled by the transport, not by the
// caller: it does not record retry.error_class=canceled, which the
// vocabulary defines as "the caller canceled the context", on its span or
// in the retry.attempts metric, where every hedge lost would otherwise
// count as a caller giving up.
func TestASupersededAttemptIsNotRecordedAsCanceledByTheCaller(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		t.Run(fmt.Sprintf("clientSpans=%v", clientSpans), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1})}
				if !clientSpans {
					opts = append(opts, otelretry.WithoutClientSpans())
				}
				h := newHarness(t, []scripted.Step{
					{Delay: 100 * time.Millisecond, Status: 200},
					{Delay: 5 * time.Millisecond, Status: 200},
				}, opts...)
				if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
					t.Fatal(err)
				}
				for _, a := range hedgeAttempts(t, h) {
					if a.decision == "superseded" && a.class == string(attrs.ErrorClassCanceled) {
						t.Errorf("the superseded attempt %d records retry.error_class=%s: the caller canceled nothing", a.number, a.class)
					}
				}
				if got := sumBy(t, h.collect(t), "retry.attempts", attrs.ErrorClassKey); got[string(attrs.ErrorClassCanceled)] != 0 {
					t.Errorf("retry.attempts by error class = %v: a lost hedge counted as a caller's cancellation", got)
				}
			})
		})
	}
}

// A race's hint (a Retry-After an attempt got while it left the retry to
// an attempt still in flight) holds the race's retry as it would have
// without hedging, whichever attempt got it; it is bounded by the one
// deadline, as a Retry-After is; and it holds that race's retry only.
func TestARaceHintHoldsTheRaceRetry(t *testing.T) {
	const ms = time.Millisecond
	wait1s := http.Header{"Retry-After": {"1"}}
	hedging := otelretry.WithHedging(otelretry.Hedging{Delay: 20 * ms, MaxShare: 1})
	backoff := otelretry.WithBackoff(otelretry.ConstantBackoff(10 * ms))
	for _, tc := range []struct {
		name  string
		steps []scripted.Step
		opts  []otelretry.Option
		// calls: when each call was sent; returned: when RoundTrip
		// returned; decisions: each attempt's.
		calls     []time.Duration
		returned  time.Duration
		decisions []string
	}{
		{
			name: "the original's 429, then the hedge's 503: the retry waits for the 429's second",
			steps: []scripted.Step{
				{Delay: 30 * ms, Status: 429, Header: wait1s}, // 1: at 30ms, "wait 1s"
				{Delay: 20 * ms, Status: 503},                 // 2 (hedge, at 20ms): at 40ms
				{Status: 200},
			},
			opts:      []otelretry.Option{otelretry.WithoutBudget()},
			calls:     []time.Duration{0, 20 * ms, 1030 * ms},
			returned:  1030 * ms,
			decisions: []string{"retry", "retry", "return"},
		},
		{
			name: "the hedge's 429, then the original's 503: the retry waits for the hedge's second",
			steps: []scripted.Step{
				{Delay: 100 * ms, Status: 503},               // 1: at 100ms
				{Delay: 5 * ms, Status: 429, Header: wait1s}, // 2 (hedge, at 20ms): at 25ms, "wait 1s"
				{Status: 200},
			},
			calls:     []time.Duration{0, 20 * ms, 1025 * ms},
			returned:  1025 * ms,
			decisions: []string{"retry", "retry", "return"},
		},
		{
			name: "past the deadline: the operation ends at the race's end, with no sleep",
			steps: []scripted.Step{
				{Delay: 30 * ms, Status: 429, Header: wait1s},
				{Delay: 20 * ms, Status: 503},
				{Status: 200},
			},
			opts:      []otelretry.Option{otelretry.WithDeadline(500 * ms), otelretry.WithoutBudget()},
			calls:     []time.Duration{0, 20 * ms},
			returned:  40 * ms,
			decisions: []string{"retry", "deadline_exceeded"},
		},
		{
			name: "the next race's retry waits for its backoff alone",
			steps: []scripted.Step{
				{Delay: 30 * ms, Status: 429, Header: wait1s},
				{Delay: 20 * ms, Status: 503},
				{Delay: 5 * ms, Status: 503}, // 3: at 1.030s, to 1.035s
				{Status: 200},                // 4: 10ms later
			},
			opts:      []otelretry.Option{otelretry.WithMaxAttempts(5), otelretry.WithoutBudget()},
			calls:     []time.Duration{0, 20 * ms, 1030 * ms, 1045 * ms},
			returned:  1045 * ms,
			decisions: []string{"retry", "retry", "retry", "return"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, append([]otelretry.Option{hedging, backoff}, tc.opts...)...)
				start := time.Now()
				status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
				if took := time.Since(start); took != tc.returned {
					t.Errorf("RoundTrip returned after %v (status %d, err %v), want %v", took, status, err, tc.returned)
				}
				var at []time.Duration
				for _, c := range h.base.Calls() {
					at = append(at, c.At.Sub(start))
				}
				if !slices.Equal(at, tc.calls) {
					t.Errorf("calls at %v, want %v", at, tc.calls)
				}
				if got := attemptDecisions(t, h); !slices.Equal(got, tc.decisions) {
					t.Errorf("decisions %v, want %v", got, tc.decisions)
				}
			})
		})
	}
}

// hedgesNotSent are the PrepareAttemptFuncs of hedges that are not sent:
// one refuses it, one panics, one is still running when the race is over.
var hedgesNotSent = []struct {
	name    string
	prepare func() error
}{
	{"refused", func() error { return errors.New("signer unavailable") }},
	{"panicked", func() error { panic("signer crashed") }},
	{"too late", func() error { time.Sleep(100 * time.Millisecond); return nil }},
}

// A hedge costs the budget its token when it is sent (docs/hedging.md):
// one that is not sent costs nothing, whether its PrepareAttemptFunc refused it,
// panicked, or was still running when the race was over. The original
// answers a 404, which changes nothing, so the host's retries show any
// token taken: two for a fresh host, one after a charge.
func TestAHedgeNotSentCostsTheBudgetNothing(t *testing.T) {
	for _, tc := range hedgesNotSent {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				budget := &otelretry.Budget{}
				h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 404}},
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithBudget(budget),
					otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
						if attempt == 2 {
							return tc.prepare()
						}
						return nil
					}))
				func() {
					defer func() { _ = recover() }() // the panicking preparation's, which RoundTrip goes on with
					_, _, _ = roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
				}()
				time.Sleep(time.Second) // the late preparation ends
				synctest.Wait()
				if calls := len(h.base.Calls()); calls != 1 {
					t.Fatalf("%d calls, want 1: the hedge was not to be sent", calls)
				}
				if n := budget.Available(get(t, t.Context(), "http://api.test/items")); n != 2 {
					t.Errorf("Available = %d after a hedge that was never sent, want a fresh host's 2", n)
				}
			})
		})
	}
}

// Under one WithOperationID, concurrent operations whose hedges are
// refused at their preparation give their numbers back (identity.unnumber)
// while the others take numbers: no number is ever sent, or recorded,
// twice. A gap is allowed there; a duplicate request id is not.
func TestConcurrentOperationsUnderOneIDNeverShareAnAttemptNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ops = 24
		var (
			mu       sync.Mutex
			prepared = map[string]int{}
		)
		steps := make([]scripted.Step, 0, 12)
		for range 11 {
			steps = append(steps, scripted.Step{Delay: 50 * time.Millisecond, Status: 503})
		}
		steps = append(steps, scripted.Step{Delay: 50 * time.Millisecond, Status: 200})
		h := newHarness(t, steps,
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithoutBudget(), otelretry.WithMaxAttempts(6),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithAttemptHeader("X-Attempt"),
			otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				mu.Lock()
				defer mu.Unlock()
				prepared[r.URL.Path]++
				if n := prepared[r.URL.Path]; n%2 == 0 && len(r.URL.Path)%2 == 0 {
					return errors.New("signer unavailable") // every other preparation of half the operations
				}
				return nil
			}))
		ctx := otelretry.WithOperationID(t.Context(), "op-shared")
		var wg sync.WaitGroup
		for i := range ops {
			wg.Go(func() {
				path := "/items/" + strings.Repeat("x", i)
				_, _, _ = roundTrip(t, h, get(t, ctx, "http://api.test"+path))
			})
		}
		wg.Wait()
		sent := map[string]int{}
		for _, c := range h.base.Calls() {
			sent[c.Header.Get("X-Attempt")]++
		}
		for n, times := range sent {
			if times > 1 {
				t.Errorf("attempt number %s sent %d times", n, times)
			}
		}
		recorded := map[int64]int{}
		for _, s := range h.attempts() {
			recorded[readEvent(t, s).Attempt]++
		}
		for n, times := range recorded {
			if times > 1 {
				t.Errorf("attempt number %d recorded %d times", n, times)
			}
		}
		if len(sent) != len(h.base.Calls()) || len(recorded) != len(h.base.Calls()) {
			t.Errorf("%d calls, %d numbers sent, %d recorded", len(h.base.Calls()), len(sent), len(recorded))
		}
	})
}

// On loopback, through net/http: the attempt that lost its race records
// race_lost on every channel, its span, its log record (WithLoggerProvider),
// its slog record (WithLogger) and the retry.attempts metric, and nothing
// records canceled.
func TestTheAttemptThatLostRecordsRaceLostOnEveryChannel(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			select { // the original: slow, until it is canceled
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	spans, reader, logs := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader(), &logRecorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(logs))
	defer lp.Shutdown(context.Background())
	var slogBuf bytes.Buffer
	h := &harness{spans: spans, reader: reader}
	h.transprt = otelretry.NewTransport(srv.Client().Transport, otelretry.WithTracerProvider(tp),
		otelretry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		otelretry.WithLoggerProvider(lp), otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogBuf, nil))),
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
	defer h.transprt.CloseIdleConnections()
	if status, _, err := roundTrip(t, h, get(t, t.Context(), srv.URL)); err != nil || status != 200 {
		t.Fatalf("got %d %v", status, err)
	}
	want := string(attrs.ErrorClassRaceLost)
	var classes []string
	for _, a := range hedgeAttempts(t, h) {
		classes = append(classes, a.decision+":"+a.class)
	}
	// Whichever attempt reached the server first is the slow one: under
	// load, the hedge may, and the first attempt wins.
	slices.Sort(classes)
	if w := []string{"return:", "superseded:" + want}; !slices.Equal(classes, w) {
		t.Errorf("attempt spans %v, want %v", classes, w)
	}
	classes = nil
	for _, rec := range logs.named(attrs.LogEventAttempt) {
		a := recordAttrs(rec)
		classes = append(classes, a[attrs.DecisionKey].AsString()+":"+a[attrs.ErrorClassKey].AsString())
	}
	slices.Sort(classes)
	if w := []string{"return:", "superseded:" + want}; !slices.Equal(classes, w) {
		t.Errorf("attempt log records %v, want %v", classes, w)
	}
	classes = nil
	for line := range strings.Lines(slogBuf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if d, _ := rec[string(attrs.DecisionKey)].(string); d != "" {
			c, _ := rec[string(attrs.ErrorClassKey)].(string)
			classes = append(classes, d+":"+c)
		}
	}
	slices.Sort(classes)
	if w := []string{"return:", "superseded:" + want}; !slices.Equal(classes, w) {
		t.Errorf("slog records %v, want %v", classes, w)
	}
	if got := sumBy(t, h.collect(t), "retry.attempts", attrs.ErrorClassKey); got[want] != 1 || got[string(attrs.ErrorClassCanceled)] != 0 {
		t.Errorf("retry.attempts by error class = %v, want one %s", got, want)
	}
}

// Under WithOperationID, the numbers keep no gap when the hedge's
// preparation is still running as its race ends: the attempt it hedged
// fails, the race is over, and the retry follows before the preparation
// (a PrepareAttemptFunc that stops when its context is canceled, as the docs ask)
// lets go of its number. The hedge was never sent: the retry is attempt 2,
// as it is without WithOperationID.
func TestAHedgeStillPreparingWhenItsRaceEndsLeavesNoGapInTheNumbers(t *testing.T) {
	for _, withID := range []bool{false, true} {
		t.Run(fmt.Sprintf("WithOperationID=%v", withID), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var hedgePrepared atomic.Bool
				h := newHarness(t, []scripted.Step{
					{Delay: 50 * time.Millisecond, Status: 503},
					{Status: 200},
				}, otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)),
					otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
						if attempt != 2 || hedgePrepared.Swap(true) {
							return nil // not the hedge
						}
						select { // the hedge's signer: slow, and it stops when told
						case <-time.After(time.Second):
							return nil
						case <-r.Context().Done():
							time.Sleep(30 * time.Millisecond) // it takes its time to stop
							return r.Context().Err()
						}
					}),
					otelretry.WithAttemptHeader("X-Attempt"))
				ctx := t.Context()
				if withID {
					ctx = otelretry.WithOperationID(ctx, "op-36")
				}
				if status, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items")); err != nil || status != 200 {
					t.Fatalf("got %d %v", status, err)
				}
				time.Sleep(time.Second) // the preparation ends
				var numbers []int64
				for _, a := range hedgeAttempts(t, h) {
					numbers = append(numbers, a.number)
				}
				var sent []string
				for _, c := range h.base.Calls() {
					sent = append(sent, c.Header.Get("X-Attempt"))
				}
				if want := []int64{1, 2}; !slices.Equal(numbers, want) {
					t.Errorf("attempt numbers %v (sent %v), want %v", numbers, sent, want)
				}
			})
		})
	}
}

// "When every answer is late but succeeds and the hedge rate allows more,
// the budget lets about every other operation hedge" (docs/hedging.md): a
// hedge costs a token and the answer that wins gives half of one back, so
// one operation at a time, past the host's first tokens, one in two
// hedges; with many in flight at once, fewer (the successes that come
// together refill the host only to its full count), never more.
func TestTheBudgetLetsAtMostAboutEveryOtherSlowOperationHedge(t *testing.T) {
	for _, tc := range []struct{ concurrent, least int }{{1, 45}, {8, 5}, {32, 5}} {
		t.Run(fmt.Sprintf("concurrent=%d", tc.concurrent), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ops := 400 / tc.concurrent * tc.concurrent
				h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}},
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithBudget(&otelretry.Budget{}))
				var wg sync.WaitGroup
				for range tc.concurrent {
					wg.Go(func() {
						for range ops / tc.concurrent {
							if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
								t.Error(err)
							}
						}
					})
				}
				wg.Wait()
				if hedges := len(h.base.Calls()) - ops; hedges > ops*55/100 || hedges < ops*tc.least/100 {
					t.Errorf("%d hedges for %d slow operations, want from %d%% to about half", hedges, ops, tc.least)
				}
			})
		})
	}
}

// A fresh dependency hedges from its first operations: with Adaptive and
// no Delay, until 20 answers were seen the delay is the longest answer
// seen so far (MaxDelay before the first), and the hedges sent stay within
// the rate: at most its burst plus MaxShare per operation. Here every
// answer takes 10 ms but the first request of every odd operation from the
// third on, which stalls (200 ms): the rate's burst (5 at the default
// MaxShare) hedges the first 5 stalls after 11 ms and refuses the next,
// whose stall, answered, is then the longest answer seen.
func TestAFreshDependencyHedgesFromItsFirstOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := answersAfter(func(r *http.Request) time.Duration {
			d := 10 * time.Millisecond
			if n, _ := strconv.Atoi(r.URL.Query().Get("op")); n >= 2 && n%2 == 1 && r.Header.Get("X-Attempt") == "1" {
				d = 200 * time.Millisecond
			}
			return d
		})
		rec, opts := tracingProviders()
		tr := otelretry.NewTransport(base, append(opts, otelretry.WithoutBudget(),
			otelretry.WithAttemptHeader("X-Attempt"),
			otelretry.WithHedging(otelretry.Hedging{Adaptive: true}))...)
		const ops = 19 // fewer than 20 answers
		var sent, refused []string
		for i := range ops {
			rec.Reset()
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items?op="+strconv.Itoa(i)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			for _, op := range spantest.Operations(rec.Ended()) {
				for _, ev := range op.Events() {
					d, _ := attrValue(ev.Attributes, attrs.HedgeDelayMsKey)
					switch reason, _ := attrValue(ev.Attributes, attrs.ReasonKey); {
					case ev.Name == attrs.EventHedgeSent:
						sent = append(sent, fmt.Sprintf("op %d after %sms", i, d))
					case ev.Name == attrs.EventHedgeRefused && reason == string(attrs.ReasonHedgeLimit):
						refused = append(refused, fmt.Sprintf("op %d after %sms", i, d))
					}
				}
			}
		}
		// The burst, a hundred operations' worth of the default rate (5),
		// and 0.05 a operation: 5.95.
		const defaultShare = 0.05 // Hedging.MaxShare's default
		limit := 100*defaultShare + defaultShare*ops
		if len(sent) == 0 || float64(len(sent)) > limit {
			t.Errorf("hedges sent before 20 answers: %v; want from the first stall on, at most %.2f", sent, limit)
		}
		if len(refused) == 0 {
			t.Errorf("sent %v and the rate refused none; want the rate to bind", sent)
		}
		// The longest answer, 10 ms, read as its bucket's upper bound.
		if len(sent) > 0 && sent[0] != "op 3 after 11ms" {
			t.Errorf("first hedge %q, want op 3's, after the longest answer seen (11ms)", sent[0])
		}
	})
}

// An Intent's Hedging is not checked as WithHedging's is: a MaxShare of
// NaN there (a share computed as 0/0) reads as the default share, and
// never lifts the hedge rate that bounds the load hedging adds in a
// brownout (a burst of 5, then one hedge per 20 operations).
func TestAnIntentsNaNHedgeShareKeepsTheDefaultRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ops = 100
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}}, otelretry.WithoutBudget())
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Hedging: &otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: math.NaN()}})
		sent := 0
		for range ops {
			h.spans.Reset()
			if _, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items")); err != nil {
				t.Fatal(err)
			}
			for _, e := range hedgeEvents(t, h) {
				if strings.HasPrefix(e, "hedge_sent") {
					sent++
				}
			}
		}
		if want := 5 + ops*5/100; sent == 0 || sent > want+1 {
			t.Errorf("MaxShare NaN: %d hedges for %d slow operations, want 1 to %d (the default share)", sent, ops, want+1)
		}
	})
}

// Backoff's n is the retry the pause precedes (n = 1 before the second
// attempt): after a race of an attempt and its hedge that both failed,
// the retry is the third attempt, retry 2, whichever of the two was
// answered last.
func TestTheBackoffIsToldTheRetryItPrecedesAfterARace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []scripted.Step
	}{
		{"the hedge fails last", []scripted.Step{
			{Delay: 30 * time.Millisecond, Status: 503}, // 1: fails at 30ms, its hedge in flight
			{Delay: 40 * time.Millisecond, Status: 503}, // 2 (hedge at 20ms): fails at 60ms, alone
			{Status: 200},
		}},
		{"the hedged attempt fails last", []scripted.Step{
			{Delay: 60 * time.Millisecond, Status: 503}, // 1: fails at 60ms, alone
			{Delay: 10 * time.Millisecond, Status: 503}, // 2 (hedge at 20ms): fails at 30ms, 1 in flight
			{Status: 200},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var asked []int
				backoff := func(n int, a otelretry.Answer) time.Duration {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, n)
					return 10 * time.Millisecond
				}
				h := newHarness(t, tc.steps, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithMaxAttempts(4), otelretry.WithBackoff(backoff))
				if status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || status != 200 {
					t.Fatalf("got %d, %v", status, err)
				}
				if n := len(h.base.Calls()); n != 3 {
					t.Fatalf("%d calls, want 3", n)
				}
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(asked, []int{2}) {
					t.Errorf("Backoff asked for retry %v before the third attempt, want [2]", asked)
				}
			})
		})
	}
}

// docs/hedging.md: "After the delay with no response headers, a hedge is
// admitted". An answer that came before the delay is not hedged while a
// Classifier that takes its time reads it: a hedge then would be one more
// request, a budget token and a hedge of the rate, for nothing.
func TestNoHedgeOnceTheAnswerCameWhileTheClassifierRuns(t *testing.T) {
	for name, status := range map[string]int{"a 200": 200, "a 503": 503} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				classifier := func(a otelretry.Answer) otelretry.Classification {
					time.Sleep(30 * time.Millisecond) // a lookup, a slow log sink
					return otelretry.Classification{}
				}
				h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: status}, {Status: 200}},
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithClassifier(classifier), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
				if got, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || got != 200 {
					t.Fatalf("got %d, %v", got, err)
				}
				want := 1
				if status == 503 {
					want = 2 // its retry, not a hedge
				}
				if calls := h.base.Calls(); len(calls) != want {
					t.Errorf("%d calls, want %d: the answer came at 10ms, before the 20ms hedge delay; hedge events %q",
						len(calls), want, hedgeEvents(t, h))
				}
			})
		})
	}
}

// A hedge admitted at the delay whose preparation (a PrepareAttemptFunc
// that signs the request) ends after the attempt it hedges was answered,
// while the Classifier reads that answer, is not sent: its number and
// tokens are given back (docs/hedging.md: "After the delay with no
// response headers, a hedge is admitted").
func TestNoHedgeIsSentOnceItsAttemptWasAnsweredWhileItWasPrepared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prepare := func(req *http.Request, attempt int) error {
			if attempt > 1 {
				time.Sleep(30 * time.Millisecond) // a signer, a token fetch: the hedge is ready at 50ms
			}
			return nil
		}
		classifier := func(a otelretry.Answer) otelretry.Classification {
			time.Sleep(40 * time.Millisecond) // a lookup, a slow log sink: the 25ms answer is judged at 65ms
			return otelretry.Classification{}
		}
		h := newHarness(t, []scripted.Step{{Delay: 25 * time.Millisecond, Status: 200}, {Status: 200}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
			otelretry.WithPrepareAttempt(prepare), otelretry.WithClassifier(classifier))
		if got, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil || got != 200 {
			t.Fatalf("got %d, %v", got, err)
		}
		if calls := h.base.Calls(); len(calls) != 1 {
			t.Errorf("%d calls, want 1: the answer came at 25ms, before the hedge was ready at 50ms; hedge events %q",
				len(calls), hedgeEvents(t, h))
		}
	})
}

// A hedge whose preparation (a slow token fetch) outlives its race is let
// go of on the preparation's goroutine, a goroutine of otelretry's own:
// closing the body GetBody gave it runs user code there, whose panic goes
// to otel.Handle instead of ending the process.
func TestAHedgeLetGoOfAfterItsRaceReportsItsBodyClosePanic(t *testing.T) {
	errs := captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			time.Sleep(40 * time.Millisecond) // past the hedge delay
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		prepared := 0
		rt := otelretry.NewTransport(base,
			otelretry.WithBodyBuffer(0, 0), // the hedge's body comes from GetBody
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
				if attempt > 1 {
					time.Sleep(100 * time.Millisecond) // a token fetch that outlives the race
					prepared++
				}
				return nil
			}))
		req := searchWithPanickyCopies(t)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(time.Second)
		synctest.Wait()
		if prepared != 1 {
			t.Fatalf("the hedge was prepared %d times, want once", prepared)
		}
		if got := errs(); len(got) != 1 {
			t.Fatalf("otel.Handle got %v, want the body Close's panic", got)
		}
	})
}

// A hedge's GetBody body whose Close panics, closed while the race is still
// running (its caller waits for the race), is a panic of the caller's body
// during the operation: doc.go "A base, a hook or the telemetry ... that
// panics has what the operation holds released ... and the panic goes on".
// It does when the hedge is refused at its preparation; it must also when
// the hedge is not sent because its attempt was answered while it was
// prepared: the race is not over, the caller has no response yet.
func TestAHedgeNotSentMidRaceLetsItsBodyClosePanicGoOn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepErr bool // the hedge is refused at its preparation
	}{
		{"refused at its preparation", true},
		{"not sent: its attempt was answered while it was prepared", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := captureOtelErrors(t)
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					if r.Body != nil {
						io.Copy(io.Discard, r.Body)
						r.Body.Close()
					}
					time.Sleep(15 * time.Millisecond) // past the 10ms hedge delay
					return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				rt := otelretry.NewTransport(base,
					otelretry.WithBodyBuffer(0, 0), // the hedge's body comes from GetBody
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
						if attempt > 1 {
							time.Sleep(10 * time.Millisecond) // ready at 20ms, after the 15ms answer
							if tc.prepErr {
								return errors.New("signer down")
							}
						}
						return nil
					}),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						time.Sleep(30 * time.Millisecond) // the 15ms answer is judged at 45ms
						return otelretry.Classification{}
					}))
				req := searchWithPanickyCopies(t)
				recovered := roundTripRecovered(rt, req)
				time.Sleep(time.Second)
				synctest.Wait()
				if recovered == nil {
					t.Errorf("RoundTrip returned normally (%d base calls); the hedge's body Close panicked during the race and went to otel.Handle: %v",
						calls.Load(), errs())
				}
			})
		})
	}
}

type closeTracked struct {
	io.Reader
	closed *atomic.Int32
}

func (b closeTracked) Close() error { b.closed.Add(1); return nil }

// Two panics in one race: the unsent hedge's body Close panics first
// (which ends the race), then the attempt still in flight panics in its
// Classifier, holding the base's response. The first panic goes on to the
// caller (doc.go: a hook that panics has what the operation holds
// released, connections included, and the panic goes on), and the second
// attempt's response is closed too.
func TestASecondPanicInARaceReleasesItsAttemptsResponse(t *testing.T) {
	_ = captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			time.Sleep(15 * time.Millisecond)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
				Body: closeTracked{strings.NewReader("hello"), &closed}}, nil
		})
		rt := otelretry.NewTransport(base,
			otelretry.WithBodyBuffer(0, 0),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
				if attempt > 1 {
					time.Sleep(10 * time.Millisecond) // ready at 20ms, after the 15ms answer
				}
				return nil
			}),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				time.Sleep(30 * time.Millisecond) // judged at 45ms
				panic("classifier exploded")
			}))
		req := searchWithPanickyCopies(t)
		recovered := roundTripRecovered(rt, req)
		time.Sleep(time.Second)
		synctest.Wait()
		if recovered == nil {
			t.Fatalf("no panic reached the caller")
		}
		if got := closed.Load(); got != calls.Load() {
			t.Errorf("%d of %d base response bodies closed after the panics: the attempt whose Classifier panicked second kept its response", got, calls.Load())
		}
	})
}

// hedging.md: "A hedge is a second attempt sent while the first one still
// has no answer; the first answer wins", and "After the delay with no
// response headers, a hedge is admitted". A 2xx is returned whatever a
// Classifier says, so once a race has heard a 2xx its verdict is settled:
// no hedge follows, of that attempt or of another still waiting. With MaxHedges
// 2, 16 operations in flight, each answered 200 at 30 ms by its first
// attempt while its first hedge (sent at 20 ms) hangs, and a Classifier
// that takes 30 ms: no request may reach the server after the operation's
// 200 came.
func TestNoHedgeOnceTheRaceHeardASuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct{ received, answered time.Duration }
		var mu sync.Mutex
		byOp := map[string]map[int]*seen{}
		start := time.Now()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			op := r.Header.Get("X-Op")
			n, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
			s := &seen{received: time.Since(start), answered: -1}
			mu.Lock()
			if byOp[op] == nil {
				byOp[op] = map[int]*seen{}
			}
			byOp[op][n] = s
			mu.Unlock()
			if n != 1 { // the hedges hang until canceled
				<-r.Context().Done()
				return nil, r.Context().Err()
			}
			time.Sleep(30 * time.Millisecond)
			mu.Lock()
			s.answered = time.Since(start)
			mu.Unlock()
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
		})
		tr := otelretry.NewTransport(base,
			otelretry.WithOperationIDHeader("X-Op"),
			otelretry.WithAttemptHeader("X-Attempt"),
			otelretry.WithMaxAttempts(3),
			otelretry.WithBudget(&otelretry.Budget{Tokens: 1000}),
			otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1, MaxHedges: 2}),
			otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
				time.Sleep(30 * time.Millisecond) // a slow Classifier: a lookup, a lock
				return otelretry.Classification{}
			}),
		)
		const ops = 16
		var wg sync.WaitGroup
		for range ops {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		late := 0
		for op, attempts := range byOp {
			first := attempts[1]
			for n, s := range attempts {
				if n != 1 && first != nil && first.answered >= 0 && s.received > first.answered {
					late++
					if late <= 3 {
						t.Errorf("op %s: attempt %d reached the server at %v, after attempt 1 was answered 200 at %v", op, n, s.received, first.answered)
					}
				}
			}
		}
		if late > 0 {
			t.Errorf("%d of %d operations sent a hedge after their race heard its 200", late, ops)
		}
	})
}

// searchWithPanickyCopies is a POST search marked repeatable, so that it
// races, whose GetBody copies panic when closed.
func searchWithPanickyCopies(t *testing.T) *http.Request {
	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/search", strings.NewReader(`{"q":1}`))
	req.GetBody = func() (io.ReadCloser, error) { return panicOnClose{strings.NewReader(`{"q":1}`)}, nil }
	return req
}

// A hedge's preparation still running when the race is over is not waited
// for; when it then failed, its error was sanitized against the caller's
// header map on its own goroutine, after RoundTrip returned and while the
// caller reused its request, as net/http allows once the body is closed:
// a data race, and without the race detector "concurrent map iteration and
// map write", which ends the process (run under -race).
func TestALateHedgesErrorReadsNotTheCallersHeaders(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		select {
		case <-time.After(40 * time.Millisecond):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	hookDone := make(chan struct{})
	prep := func(req *http.Request, attempt int) error {
		if attempt == 1 {
			return nil
		}
		<-req.Context().Done() // the race is over
		time.Sleep(30 * time.Millisecond)
		defer close(hookDone)
		return errors.New("token fetch: canceled")
	}
	rt := otelretry.NewTransport(base, otelretry.WithHedging(otelretry.Hedging{Delay: 5 * time.Millisecond, MaxShare: 1, MaxHedges: 1}),
		otelretry.WithPrepareAttempt(prep), otelretry.WithDeadline(2*time.Second))
	req := get(t, context.Background(), "http://api.test/x")
	req.Header.Set("Authorization", "Bearer secret-token-123456")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	reuseRequest(t, req, hookDone)
}

// reuseRequest writes into req (its headers, host, path, trailers and
// GetBody) for a while, as a caller that reuses its request once RoundTrip
// returned and the body is closed (as net/http allows), until done closes,
// and waits for the goroutine that closed done to end.
func reuseRequest(t *testing.T, req *http.Request, done <-chan struct{}) {
	t.Helper()
	for i := range 80 {
		req.Header.Set("Authorization", fmt.Sprintf("Bearer another-token-%d", i))
		req.Header.Set(fmt.Sprintf("X-Reuse-%d", i), "v")
		req.Host = fmt.Sprintf("api-%d.test", i)
		req.URL.Path = fmt.Sprintf("/reused/%d", i)
		req.Trailer = http.Header{fmt.Sprintf("X-T-%d", i): nil}
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the hedge's preparation never ended")
	}
	time.Sleep(50 * time.Millisecond) // the preparation's goroutine ends
}

// A hedge's body comes from the caller's GetBody, on the hedge's own
// goroutine. When GetBody is slow and the race is over before it returns,
// the caller may already reuse its request: the hedge's preparation reads
// its own copy of the request, made before RoundTrip returned, whether
// GetBody fails (its error is scrubbed of the copy's credential headers)
// or not (the copy gets the body). Before, it copied, or scrubbed with,
// the caller's header map then (a data race; run under -race).
func TestALateHedgesBodyReadsNotTheCallersRequest(t *testing.T) {
	for _, fails := range []bool{true, false} {
		t.Run(fmt.Sprintf("GetBody fails %v", fails), func(t *testing.T) {
			base := drainingOKAfter(30 * time.Millisecond)
			rt := otelretry.NewTransport(base, otelretry.WithHedging(otelretry.Hedging{Delay: 5 * time.Millisecond, MaxShare: 1, MaxHedges: 1}),
				otelretry.WithDeadline(2*time.Second))
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/search", strings.NewReader(`{"q":1}`))
			req.Header.Set("Authorization", "Bearer secret-token-123456")
			getBodyDone := make(chan struct{})
			req.GetBody = func() (io.ReadCloser, error) {
				defer close(getBodyDone)
				time.Sleep(60 * time.Millisecond) // the race is over meanwhile
				if fails {
					return nil, errors.New("reopen body: gone")
				}
				return io.NopCloser(strings.NewReader(`{"q":1}`)), nil
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			reuseRequest(t, req, getBodyDone)
		})
	}
}

// A dependency whose first requests stall while their hedges win keeps
// its delay within twice the winners' p95 only while no answer it holds
// took longer than the cut attempts (above): one that did, here the first
// answer, which paid for the connection's setup (100 ms), draws the cut
// attempts' weight to its own time, as the redistribute-to-the-right
// estimate reads them (they took at least their elapsed time, and the one
// longer answer is all that shows how much longer), and the delay rises to
// it until the sketch's halvings forget it (docs/hedging.md, "The delay").
func TestOneSlowAnswerHeldDrawsTheCutAttemptsWeight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delays, slow := stalledFirstRequests(t, 100*time.Millisecond)
		// The cut attempts' weight goes to the one answer held that took
		// longer than they did, the connection's 100 ms: the delay rises to
		// its bucket (the sketch reads 83 to 100 ms there) after the first
		// cuts, and stays under the stall: every operation is still hedged
		// before its first request's 150 ms are over.
		if len(delays) != 80 || slow != 0 {
			t.Fatalf("%d of 80 operations hedged, %d waited the whole stall (delays %v)", len(delays), slow, delays)
		}
		if early, late := delays[0], slices.Min(delays[10:]); early > 4 || late < 80 || slices.Max(delays) > 110 {
			t.Errorf("delays %v: want the winners' 2 ms first, then the slow answer's bucket (80 to 110 ms)", delays)
		}
	})
}

// stalledFirstRequests runs 40 operations on a dependency whose answers
// take 2 ms (its first one first instead, when first is set: a
// connection's setup), then 80 whose first requests stall 150 ms while
// their hedges answer in 2 ms, adaptive delay and no budget, and returns
// each hedge's delay (ms) and how many operations waited the whole stall.
func stalledFirstRequests(t *testing.T, first time.Duration) (delays []int, slow int) {
	t.Helper()
	var warm atomic.Bool
	var calls atomic.Int64
	base := answersAfter(func(r *http.Request) time.Duration {
		switch {
		case calls.Add(1) == 1 && first > 0:
			return first
		case warm.Load() && r.Header.Get("X-Attempt") == "1":
			return 150 * time.Millisecond
		}
		return 2 * time.Millisecond
	})
	rec, opts := tracingProviders()
	tr := otelretry.NewTransport(base, append(opts, otelretry.WithoutBudget(),
		otelretry.WithAttemptHeader("X-Attempt"),
		otelretry.WithHedging(otelretry.Hedging{Adaptive: true, MaxShare: 1}))...)
	send := func() {
		resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for range 40 {
		send()
	}
	warm.Store(true)
	for range 80 {
		rec.Reset()
		start := time.Now()
		send()
		if time.Since(start) >= 150*time.Millisecond {
			slow++
		}
		for _, op := range spantest.Operations(rec.Ended()) {
			for _, ev := range op.Events() {
				if ev.Name == attrs.EventHedgeSent {
					d, _ := attrValue(ev.Attributes, attrs.HedgeDelayMsKey)
					delays = append(delays, mustInt(t, d))
				}
			}
		}
	}
	return delays, slow
}
