// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

func budgetRequest(host string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	return r
}

// Observations as the transport reports them.
var (
	obs503     = budgetObservation{failure: true, status: http.StatusServiceUnavailable}
	obs200     = budgetObservation{success: true, status: http.StatusOK}
	obsTimeout = budgetObservation{failure: true, timeout: true}
)

// fail records a retryable failure for key now and asks for a retry that
// starts now, as the transport does after a 503 with no pause.
func fail(b *Budget, key string) attrs.Reason {
	now := time.Now()
	b.record(key, now, obs503)
	return b.retry(key, now, now, budgetObservation{})
}

func succeed(b *Budget, key string, n int) {
	for range n {
		b.record(key, time.Now(), obs200)
	}
}

// checkBudget asserts the table's invariants: tokens within [0, all],
// no more hosts than the limit, no kept host in a fresh host's state unless
// its listing in the wheel is still to be drained, each listed host
// listed exactly once, in the slot of its second, and the activity list
// holding exactly the kept hosts, idlest first.
func checkBudget(t *testing.T, b *Budget) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	checkActivity(t, b)
	if len(b.hosts) > b.hostLimit() || int64(len(b.hosts)) != b.stateful.Load() {
		t.Fatalf("%d hosts kept, stateful %d, limit %d", len(b.hosts), b.stateful.Load(), b.hostLimit())
	}
	listed := map[string]int{}
	for i, slot := range b.wheel.slots {
		for _, k := range slot {
			e, ok := b.hosts[k]
			if !ok || e.queued%wheelSlots != int64(i) {
				t.Fatalf("wheel slot %d lists %q, kept=%v queued=%d", i, k, ok, e.queued)
			}
			listed[k]++
		}
	}
	for k, e := range b.hosts {
		if full := b.tokens(); e.milli < full/2 || e.milli > full {
			t.Fatalf("%q holds %d milli-tokens, outside [%d, %d]", k, e.milli, full/2, full)
		}
		if e.queued != 0 && listed[k] != 1 {
			t.Fatalf("%q queued for second %d but listed %d times", k, e.queued, listed[k])
		}
		if e.queued == 0 && listed[k] != 0 {
			t.Fatalf("%q listed but not queued", k)
		}
		if e.queued == 0 && e.milli == b.tokens() && e.hold <= 0 && len(e.loans.open) == 0 {
			t.Fatalf("%q is kept in a fresh host's state", k)
		}
	}
}

func TestBudgetKey(t *testing.T) {
	b := &Budget{}
	if got := b.key(budgetRequest("a.test:8080")); got != "a.test:8080" {
		t.Fatalf("key = %q, want the URL host", got)
	}
	r := &http.Request{URL: nil, Host: "h.test"}
	if got := b.key(r); got != "h.test" {
		t.Fatalf("key without URL = %q, want the Host header", got)
	}
	byPath := &Budget{Key: func(r *http.Request) string { return r.URL.Path }}
	if got := byPath.key(budgetRequest("a.test")); got != "/" {
		t.Fatalf("Key: key = %q, want /", got)
	}
}

// The seed timeline: 503, 503, 200 from a fresh client is three calls.
func TestBudgetFreshHostGetsTwoRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		r := budgetRequest("a.test")
		if got := b.Available(r); got != 2 {
			t.Fatalf("fresh host: Available = %d, want 2", got)
		}
		for i, want := range []attrs.Reason{"", "", attrs.ReasonBudget, attrs.ReasonBudget} {
			if got := fail(b, "a.test"); got != want {
				t.Fatalf("failure %d: admit = %q, want %q", i+1, got, want)
			}
		}
		if got := b.Available(r); got != 0 {
			t.Fatalf("drained host: Available = %d, want 0", got)
		}
		// Another host has its own tokens.
		if got := fail(b, "c.test"); got != "" {
			t.Fatalf("another host: admit = %q, want allowed", got)
		}
		checkBudget(t, b)
	})
}

func TestBudgetSeedTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		if fail(b, "a.test") != "" || fail(b, "a.test") != "" {
			t.Fatal("a fresh client must retry 503, 503")
		}
		succeed(b, "a.test", 1)
		// 6 - 2 + 0.5: retries are allowed again at once.
		if got := b.Available(budgetRequest("a.test")); got != 1 {
			t.Fatalf("after 503, 503, 200: Available = %d, want 1", got)
		}
	})
}

// During failure nothing is earned from the passage of time: an hour of
// silence after an outage leaves the host exactly as drained.
func TestBudgetEarnsNothingFromTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		for range 10 {
			fail(b, "a.test")
		}
		for _, wait := range []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour} {
			time.Sleep(wait)
			if got := b.retry("a.test", time.Now(), time.Now(), budgetObservation{}); got != attrs.ReasonBudget {
				t.Fatalf("after %s more: admit = %q, want budget", wait, got)
			}
		}
		checkBudget(t, b)
	})
}

// After an outage three successes (0.5 each) let the next failure be
// retried; two do not. The count never went below half, so a long outage
// needs no more successes than a short one.
func TestBudgetRecoversAfterThreeSuccesses(t *testing.T) {
	for _, outage := range []int{3, 10, 10000} {
		t.Run(fmt.Sprint(outage, " failures"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &Budget{}
				for range outage {
					fail(b, "a.test")
				}
				succeed(b, "a.test", 2)
				if got := fail(b, "a.test"); got != attrs.ReasonBudget {
					t.Fatalf("after 2 successes: admit = %q, want budget", got)
				}
				b2 := &Budget{}
				for range outage {
					fail(b2, "a.test")
				}
				succeed(b2, "a.test", 3)
				if got := fail(b2, "a.test"); got != "" {
					t.Fatalf("after 3 successes: admit = %q, want allowed", got)
				}
			})
		})
	}
}

// The threshold failure rate is r/(1+r): with the default ratio 0.5, one
// failure in three keeps retries going, slightly more stops them.
func TestBudgetSteadyFailureRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		// Pattern: success, success, failure. Each cycle nets 0.
		allowed := 0
		for range 300 {
			succeed(b, "a.test", 2)
			if fail(b, "a.test") == "" {
				allowed++
			}
		}
		if allowed != 300 {
			t.Fatalf("one failure in three: %d of 300 retries allowed, want all", allowed)
		}
		// Pattern: success, failure, failure: nets -1.5 a cycle.
		allowed = 0
		for range 300 {
			succeed(b, "a.test", 1)
			for range 2 {
				if fail(b, "a.test") == "" {
					allowed++
				}
			}
		}
		if allowed > 3 {
			t.Fatalf("two failures in three: %d retries allowed, want at most the 3 tokens above half", allowed)
		}
	})
}

// Answers the policy neither counts as success nor as failure leave the
// tokens alone.
func TestBudgetNeutralAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		fail(b, "a.test")
		for _, s := range []int{404, 500, 501} {
			b.record("a.test", time.Now(), budgetObservation{status: s})
		}
		if got := b.hosts["a.test"].milli; got != 5000 {
			t.Fatalf("tokens after neutral answers = %d milli, want 5000", got)
		}
		b.record("fresh.test", time.Now(), budgetObservation{status: 404})
		if _, kept := b.hosts["fresh.test"]; kept {
			t.Fatal("a neutral answer stored a host")
		}
		checkBudget(t, b)
	})
}

// A timeout costs one token, like any failure: a fresh host retries two.
func TestBudgetTimeoutCostsOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		for i, want := range []attrs.Reason{"", "", attrs.ReasonBudget} {
			now := time.Now()
			b.record("a.test", now, obsTimeout)
			if got := b.retry("a.test", now, now, budgetObservation{}); got != want {
				t.Fatalf("timeout %d: admit = %q, want %q", i+1, got, want)
			}
		}
	})
}

func TestBudgetTokensOption(t *testing.T) {
	for _, c := range []struct{ tokens, retries int }{{1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {6, 2}, {7, 3}, {20, 9}, {1000, 499}} {
		synctest.Test(t, func(t *testing.T) {
			b := &Budget{Tokens: c.tokens}
			if got := b.Available(budgetRequest("a.test")); got != c.retries {
				t.Errorf("Tokens %d: Available = %d, want %d", c.tokens, got, c.retries)
			}
			retries := 0
			for range 2 * c.tokens {
				if fail(b, "a.test") == "" {
					retries++
				}
			}
			if retries != c.retries {
				t.Errorf("Tokens %d: %d retries in an outage, want %d", c.tokens, retries, c.retries)
			}
		})
	}
}

func TestBudgetTokenRatioOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Ratio 0.1 (gRPC's usual): eleven successes to retry again.
		b := &Budget{TokenRatio: 0.1}
		for range 5 {
			fail(b, "a.test")
		}
		succeed(b, "a.test", 10)
		if got := fail(b, "a.test"); got != attrs.ReasonBudget {
			t.Fatalf("ratio 0.1, 10 successes: admit = %q, want budget", got)
		}
		succeed(b, "a.test", 11)
		if got := fail(b, "a.test"); got != "" {
			t.Fatalf("ratio 0.1, 11 successes: admit = %q, want allowed", got)
		}
	})
}

// A setting out of its range reads as its default, and WithBudget
// reports it, naming it, for NewTransport to hand to otel.Handle; a
// setting at either end of its range is kept.
func TestBudgetSettingsOutOfRangeReadAsTheirDefaults(t *testing.T) {
	defaults := func(b *Budget) bool {
		return b.tokens() == defaultBudgetTokens*1000 && b.ratio() == defaultBudgetTokenRatio*1000 &&
			b.hostLimit() == defaultBudgetMaxHosts && b.hold429() == defaultBudgetPushback && b.idleAfter() == defaultBudgetIdleEviction
	}
	for _, c := range []struct {
		setting string
		b       *Budget
	}{
		{"Tokens", &Budget{Tokens: -1}}, {"Tokens", &Budget{Tokens: 1001}},
		{"TokenRatio", &Budget{TokenRatio: -0.5}}, {"TokenRatio", &Budget{TokenRatio: 1.5}},
		{"TokenRatio", &Budget{TokenRatio: math.NaN()}}, {"TokenRatio", &Budget{TokenRatio: 0.0001}},
		{"MaxHosts", &Budget{MaxHosts: -1}},
		{"Pushback", &Budget{Pushback: 2 * time.Minute}},
		{"IdleEviction", &Budget{IdleEviction: 59 * time.Second}}, {"IdleEviction", &Budget{IdleEviction: -time.Minute}},
	} {
		err := newConfig([]Option{WithBudget(c.b)}).complaint()
		if !errors.Is(err, errInvalidBudgetSetting) || !strings.Contains(err.Error(), "Budget."+c.setting) {
			t.Errorf("%s %+v: reported %v, want an errInvalidBudgetSetting naming it", c.setting, c.b, err)
		}
		if !defaults(c.b) {
			t.Errorf("%s %+v: does not read as the defaults", c.setting, c.b)
		}
	}
	for _, b := range []*Budget{
		{}, {Tokens: 1}, {Tokens: 1000}, {TokenRatio: 0.001}, {TokenRatio: 1}, {MaxHosts: 1},
		{Pushback: -1}, {Pushback: time.Minute}, {IdleEviction: time.Minute},
	} {
		if err := newConfig([]Option{WithBudget(b)}).complaint(); err != nil {
			t.Errorf("%+v: reported %v, a setting in range", b, err)
		}
	}
	kept := &Budget{Tokens: 1000, TokenRatio: 0.001, MaxHosts: 1, Pushback: time.Minute, IdleEviction: time.Hour}
	if kept.tokens() != 1000*1000 || kept.ratio() != 1 || kept.hostLimit() != 1 || kept.hold429() != time.Minute ||
		kept.idleAfter() != time.Hour {
		t.Errorf("settings in range not kept: %+v", kept)
	}
	if (&Budget{Pushback: -1}).hold429() != 0 {
		t.Error("a negative Pushback holds")
	}
}

// A Retry-After received by one operation holds back every retry to the
// host that would start before it ends; the operation that received it,
// pausing that long, is not held.
func TestBudgetPushbackHoldsRetriesToTheHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		t0 := time.Now()
		b.record("a.test", t0, budgetObservation{failure: true, status: 503, pushback: 2 * time.Second})
		for _, c := range []struct {
			now, start time.Duration
			key        string
			want       attrs.Reason
		}{
			{0, 0, "a.test", attrs.ReasonPushback},
			{0, 1999 * time.Millisecond, "a.test", attrs.ReasonPushback},
			{0, 2 * time.Second, "a.test", ""}, // the operation that got the hint
			{time.Second, time.Second + 100*time.Millisecond, "a.test", attrs.ReasonPushback},
			{2 * time.Second, 2 * time.Second, "a.test", ""},
			{0, 0, "other.test", ""},
		} {
			if got := b.retry(c.key, t0.Add(c.now), t0.Add(c.start), budgetObservation{}); got != c.want {
				t.Errorf("%s at +%s starting +%s: admit = %q, want %q", c.key, c.now, c.start, got, c.want)
			}
		}
		checkBudget(t, b)
	})
}

func TestBudgetPushbackRules(t *testing.T) {
	type rec struct {
		o        budgetObservation
		pushback time.Duration // the Budget's Pushback
	}
	for _, c := range []struct {
		name string
		rec
		held time.Duration // how long retries are held from the answer
	}{
		{"429 without Retry-After: Pushback (1s)", rec{o: budgetObservation{failure: true, status: 429}}, time.Second},
		{"429 without Retry-After, Pushback 3s", rec{o: budgetObservation{failure: true, status: 429}, pushback: 3 * time.Second}, 3 * time.Second},
		{"429 without Retry-After, Pushback -1", rec{o: budgetObservation{failure: true, status: 429}, pushback: -1}, 0},
		{"429 not retried by the policy still holds", rec{o: budgetObservation{status: 429}}, time.Second},
		{"429 with Retry-After 5s", rec{o: budgetObservation{failure: true, status: 429, pushback: 5 * time.Second, hinted: true}}, 5 * time.Second},
		{"429 with a hint of 0 (Retry-After: 0, retry-after-ms: 0): no hold", rec{o: budgetObservation{failure: true, status: 429, hinted: true}}, 0},
		{"503 with Retry-After 500ms", rec{o: budgetObservation{failure: true, status: 503, pushback: 500 * time.Millisecond, hinted: true}}, 500 * time.Millisecond},
		{"503 without Retry-After", rec{o: obs503}, 0},
		{"Retry-After of a day: a minute", rec{o: budgetObservation{failure: true, status: 503, pushback: 24 * time.Hour, hinted: true}}, time.Minute},
		{"500 not retried, Retry-After 2s", rec{o: budgetObservation{status: 500, pushback: 2 * time.Second, hinted: true}}, 2 * time.Second},
		{"a 3xx's Retry-After holds nothing", rec{o: budgetObservation{success: true, status: 301, pushback: 2 * time.Second, hinted: true}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &Budget{Pushback: c.pushback}
				t0 := time.Now()
				b.record("a.test", t0, c.o)
				if c.held > 0 {
					if got := b.retry("a.test", t0, t0.Add(c.held-time.Millisecond), budgetObservation{}); got != attrs.ReasonPushback {
						t.Fatalf("retry 1ms before the hold ends: admit = %q, want pushback", got)
					}
				}
				if got := b.retry("a.test", t0, t0.Add(c.held), budgetObservation{}); got != "" {
					t.Fatalf("retry when the hold ends: admit = %q, want allowed", got)
				}
				// The hold is per host and for retries only: first attempts
				// never ask, and other hosts are not held.
				if got := b.retry("b.test", t0, t0, budgetObservation{}); got != "" {
					t.Fatalf("other host: admit = %q", got)
				}
				// Once the hold has passed, a host the answer did not charge
				// is dropped: its state is a fresh host's again.
				time.Sleep(c.held + time.Second)
				b.retry("a.test", time.Now(), time.Now(), budgetObservation{})
				if !c.o.failure {
					if _, kept := b.hosts["a.test"]; kept {
						t.Fatal("a host whose hold passed and whose tokens are all there is still kept")
					}
				}
				checkBudget(t, b)
			})
		})
	}
}

// A later, shorter hint never shortens a hold.
func TestBudgetPushbackKeepsTheLongestHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		t0 := time.Now()
		b.record("a.test", t0, budgetObservation{failure: true, status: 503, pushback: 10 * time.Second})
		b.record("a.test", t0, budgetObservation{failure: true, status: 503, pushback: time.Second})
		if got := b.retry("a.test", t0, t0.Add(5*time.Second), budgetObservation{}); got != attrs.ReasonPushback {
			t.Fatalf("admit = %q, want pushback until the 10s hold ends", got)
		}
	})
}

// A host is dropped only when its state equals a fresh host's, or when a
// full table forgets it after defaultBudgetIdleEviction idle (see
// budget_idle_internal_test.go); the table full of hosts with state
// refuses a new host's retries while they were active more recently.
func TestBudgetHostTableFailsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxHosts: 2}
		fail(b, "a.test")
		fail(b, "b.test")
		if got := fail(b, "c.test"); got != attrs.ReasonHostLimit {
			t.Fatalf("third host in a table of 2: admit = %q, want host_limit", got)
		}
		if got := b.Available(budgetRequest("c.test")); got != 0 {
			t.Fatalf("Available for a host the full table refuses = %d, want 0", got)
		}
		time.Sleep(defaultBudgetIdleEviction - time.Second)
		if got := fail(b, "c.test"); got != attrs.ReasonHostLimit {
			t.Fatalf("1s before the idle period ends: admit = %q, want host_limit (idle hosts keep their state)", got)
		}
		// A kept host is still served from its own state.
		if got := fail(b, "a.test"); got != "" {
			t.Fatalf("kept host a: admit = %q, want its second retry", got)
		}
		// b recovers: 5 + 2×0.5 = 6, a fresh host's state, so it is dropped
		// and c can be kept.
		succeed(b, "b.test", 2)
		if _, kept := b.hosts["b.test"]; kept {
			t.Fatal("a host back in a fresh host's state is still kept")
		}
		for i, want := range []attrs.Reason{"", "", attrs.ReasonBudget} {
			if got := fail(b, "c.test"); got != want {
				t.Fatalf("c after room was made, failure %d: admit = %q, want %q (as a fresh host)", i+1, got, want)
			}
		}
		if got := fail(b, "d.test"); got != attrs.ReasonHostLimit {
			t.Fatalf("d: admit = %q, want host_limit", got)
		}
		checkBudget(t, b)
	})
}

// A host held only by a hint leaves the table when the hint ends, within
// the second.
func TestBudgetHostTableDropsAHoldWhenItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxHosts: 1}
		b.record("a.test", time.Now(), budgetObservation{status: 500, pushback: 10 * time.Second})
		if got := fail(b, "b.test"); got != attrs.ReasonHostLimit {
			t.Fatalf("b while a is held: admit = %q, want host_limit", got)
		}
		time.Sleep(9 * time.Second)
		if got := fail(b, "b.test"); got != attrs.ReasonHostLimit {
			t.Fatalf("b 1s before a's hold ends: admit = %q, want host_limit", got)
		}
		time.Sleep(2 * time.Second)
		if got := fail(b, "b.test"); got != "" {
			t.Fatalf("b after a's hold ended: admit = %q, want allowed", got)
		}
		if _, kept := b.hosts["a.test"]; kept {
			t.Fatal("a is still kept")
		}
		checkBudget(t, b)
	})
}

// A hold extended while the host is listed, a gap longer than the wheel,
// and tokens spent while listed: the host is dropped exactly when its state
// is a fresh host's.
func TestBudgetHoldWheelEdges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		held := budgetObservation{status: 500, pushback: 5 * time.Second}
		b.record("a.test", time.Now(), held)
		time.Sleep(3 * time.Second)
		b.record("a.test", time.Now(), budgetObservation{status: 500, pushback: 50 * time.Second})
		time.Sleep(10 * time.Second)
		b.retry("x.test", time.Now(), time.Now(), budgetObservation{})
		if _, kept := b.hosts["a.test"]; !kept {
			t.Fatal("a dropped while its extended hold still runs")
		}
		checkBudget(t, b)
		time.Sleep(45 * time.Second)
		b.retry("x.test", time.Now(), time.Now(), budgetObservation{})
		if _, kept := b.hosts["a.test"]; kept {
			t.Fatal("a kept after its extended hold ended")
		}

		// Spent tokens while listed: kept after the hold, until successes.
		b.record("c.test", time.Now(), held)
		fail(b, "c.test")
		time.Sleep(10 * time.Second)
		b.retry("x.test", time.Now(), time.Now(), budgetObservation{})
		if _, kept := b.hosts["c.test"]; !kept {
			t.Fatal("c dropped with tokens spent")
		}
		succeed(b, "c.test", 2)
		if _, kept := b.hosts["c.test"]; kept {
			t.Fatal("c kept in a fresh host's state")
		}

		// A gap of several wheel turns.
		b.record("d.test", time.Now(), held)
		time.Sleep(1000 * time.Second)
		b.retry("x.test", time.Now(), time.Now(), budgetObservation{})
		if len(b.hosts) != 0 {
			t.Fatalf("after a long gap: %d hosts kept, want 0", len(b.hosts))
		}
		checkBudget(t, b)
	})
}

// After 100 000 hosts that failed and recovered (half of them through a
// 429's hold), a new host is budgeted exactly like one on a fresh Budget.
func TestBudgetNewHostAfterManyRecoveredHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		for i := range 100000 {
			key := fmt.Sprintf("h%d.test", i)
			now := time.Now()
			if i%2 == 0 {
				b.record(key, now, obs503)
			} else {
				b.record(key, now, budgetObservation{failure: true, status: 429})
			}
			// Kept (a host the table refused would get host_limit), then
			// recovered.
			if got := b.retry(key, now, now.Add(time.Second), budgetObservation{}); got != "" {
				t.Fatalf("host %d: admit = %q, want allowed", i, got)
			}
			succeed(b, key, 2)
			if i%100 == 0 {
				time.Sleep(100 * time.Millisecond) // 100 s in all
			}
		}
		time.Sleep(2 * time.Second) // past the last 429's hold
		b.retry("new.test", time.Now(), time.Now(), budgetObservation{})
		checkBudget(t, b)
		if len(b.hosts) != 0 {
			t.Fatalf("%d recovered hosts still kept, want 0", len(b.hosts))
		}
		fresh := &Budget{}
		for i := range 6 {
			got, want := fail(b, "new.test"), fail(fresh, "new.test")
			if got != want {
				t.Fatalf("failure %d: admit = %q, a fresh Budget says %q", i+1, got, want)
			}
		}
		succeed(b, "new.test", 3)
		succeed(fresh, "new.test", 3)
		if got, want := fail(b, "new.test"), fail(fresh, "new.test"); got != want {
			t.Fatalf("after recovery: admit = %q, a fresh Budget says %q", got, want)
		}
	})
}

// admit is a check: asking about a fresh host stores nothing, and a success
// on a fresh host takes no lock and allocates nothing.
func TestBudgetFreshHostsCostNothing(t *testing.T) {
	b := &Budget{}
	now := time.Now()
	if got := b.retry("a.test", now, now, budgetObservation{}); got != "" || len(b.hosts) != 0 {
		t.Fatalf("admit on a fresh host = %q and kept %d hosts", got, len(b.hosts))
	}
	if n := testing.AllocsPerRun(1000, func() { b.record("a.test", now, obs200) }); n != 0 {
		t.Fatalf("a success on a fresh host allocated %v times", n)
	}
	fail(b, "a.test")
	if n := testing.AllocsPerRun(1000, func() {
		b.record("a.test", now, obs200)
		b.record("a.test", now, obs503)
		b.retry("a.test", now, now, budgetObservation{})
	}); n != 0 {
		t.Fatalf("a kept host's record and admit allocated %v times", n)
	}
}

// Many goroutines, many hosts, random answers, hedges and holds, a small table:
// under -race, the invariants hold throughout and at the end.
func TestBudgetConcurrentStress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxHosts: 50}
		const workers, steps = 32, 2000
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for range steps {
					key := fmt.Sprintf("h%d.test", rng.IntN(200))
					now := time.Now()
					switch rng.IntN(7) {
					case 0, 1:
						b.record(key, now, obs200)
					case 2:
						b.record(key, now, obs503)
					case 3:
						b.record(key, now, budgetObservation{failure: true, status: 429, pushback: time.Duration(rng.IntN(3000)) * time.Millisecond})
					case 4:
						b.record(key, now, budgetObservation{status: 404})
					case 5:
						if r := b.retry(key, now, now.Add(time.Duration(rng.IntN(200))*time.Millisecond), budgetObservation{}); !r.Valid() && r != "" {
							t.Errorf("admit returned %q", r)
						}
					case 6:
						if loan, r := b.hedge(key, now); r == "" {
							if rng.IntN(2) == 0 {
								b.giveBack(key, loan, now) // a hedge not sent
							} else {
								b.spent(key, loan, now)
							}
						}
						if n := b.Available(budgetRequest(key)); n < 0 {
							t.Errorf("Available = %d after a hedge", n)
						}
					}
					if rng.IntN(50) == 0 {
						time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		checkBudget(t, b)
		// Everyone recovers: every host's state becomes a fresh host's (6
		// successes refill a host at half), and once the holds
		// pass the table is empty.
		for i := range 200 {
			succeed(b, fmt.Sprintf("h%d.test", i), 12)
		}
		time.Sleep(2 * maxPushbackHold)
		b.retry("x.test", time.Now(), time.Now(), budgetObservation{})
		checkBudget(t, b)
		if len(b.hosts) != 0 {
			t.Fatalf("%d hosts kept after everyone recovered", len(b.hosts))
		}
	})
}

// Insert cost must not grow with the table: each iteration inserts a new
// host into a table of size hosts with state and lets the oldest recover
// (two successes drop it), so the table stays at size. ns/op is about flat
// from 1 000 to 1 000 000 hosts (v0.1 copied the whole map on each insert:
// its first 10 000 hosts took 7 s).
func BenchmarkBudgetInsert(b *testing.B) {
	for _, size := range []int{1000, 100000, 1000000} {
		b.Run(fmt.Sprintf("kept=%d", size), func(b *testing.B) {
			bu := &Budget{MaxHosts: size + 1}
			now := time.Now()
			keys := make([]string, size+1)
			for i := range keys {
				keys[i] = fmt.Sprint("host-", i, ".example")
			}
			for _, k := range keys[:size] {
				bu.record(k, now, obs503)
			}
			b.ResetTimer()
			for i := range b.N {
				bu.record(keys[(i+size)%len(keys)], now, obs503) // insert
				old := keys[i%len(keys)]
				bu.record(old, now, obs200)
				bu.record(old, now, obs200) // recovered: dropped
			}
			b.StopTimer()
			if len(bu.hosts) != size {
				b.Fatalf("%d hosts kept, want %d", len(bu.hosts), size)
			}
		})
	}
}

// A full table of hosts with state: a new host's failure and refused retry.
func BenchmarkBudgetFullTable(b *testing.B) {
	bu := &Budget{MaxHosts: 10000}
	now := time.Now()
	for i := range 10000 {
		bu.record(fmt.Sprint("pre", i), now, obs503)
	}
	b.ResetTimer()
	for range b.N {
		bu.record("new", now, obs503)
		if bu.retry("new", now, now, budgetObservation{}) != attrs.ReasonHostLimit {
			b.Fatal("want host_limit")
		}
	}
}

// The hot path of a healthy client: a success with no host in the table.
func BenchmarkBudgetSuccessParallel(b *testing.B) {
	bu := &Budget{}
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bu.record("a.test", now, obs200)
		}
	})
}

// Failures and admits on one drained host from every core.
func BenchmarkBudgetFailureParallel(b *testing.B) {
	bu := &Budget{}
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bu.record("a.test", now, obs503)
			bu.retry("a.test", now, now, budgetObservation{})
		}
	})
}

// Issue 25, item 13: the zero Budget has the default settings. Each rule
// is played on a zero Budget and on one with the documented defaults
// written out, with time passed in, and must answer alike.
func TestBudgetZeroValueMatchesDefaults(t *testing.T) {
	type play func(b *Budget, t0 time.Time) []string
	for _, c := range []struct {
		name string
		play play
	}{
		{"tokens and ratio", func(b *Budget, t0 time.Time) (out []string) {
			for range 4 {
				out = append(out, string(failAt(b, "a.test", t0)))
			}
			for range 3 {
				b.record("a.test", t0, obs200)
				out = append(out, string(b.retry("a.test", t0, t0, budgetObservation{})))
			}
			return out
		}},
		{"429 without Retry-After holds a second", func(b *Budget, t0 time.Time) (out []string) {
			b.record("a.test", t0, budgetObservation{failure: true, status: http.StatusTooManyRequests})
			for _, start := range []time.Duration{0, 999 * time.Millisecond, time.Second} {
				out = append(out, string(b.retry("a.test", t0, t0.Add(start), budgetObservation{})))
			}
			return out
		}},
		{"host limit", func(b *Budget, t0 time.Time) (out []string) {
			for i := range defaultBudgetMaxHosts {
				b.record(fmt.Sprint("h", i), t0, obs503)
			}
			return append(out, string(failAt(b, "new.test", t0)), fmt.Sprint(len(b.hosts)))
		}},
		{"key", func(b *Budget, t0 time.Time) []string {
			return []string{b.key(budgetRequest("a.test:8080")), b.key(&http.Request{Host: "h.test"})}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			zero := &Budget{}
			def := &Budget{Tokens: 6, TokenRatio: 0.5, MaxHosts: 10000, Pushback: time.Second,
				IdleEviction: 10 * time.Minute, Key: func(r *http.Request) string { // the URL's host, else Host
					if r.URL != nil && r.URL.Host != "" {
						return r.URL.Host
					}
					return r.Host
				}}
			got, want := c.play(zero, t0), c.play(def, t0)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("zero Budget: %q, the defaults written out: %q", got, want)
			}
			checkBudget(t, zero)
		})
	}
	var zero Budget
	if got := zero.Available(budgetRequest("a.test")); got != 2 {
		t.Fatalf("zero Budget: Available = %d, want a fresh host's 2", got)
	}
}

// A negative Pushback means no hold, not the default.
func TestBudgetPushbackZeroIsNoHold(t *testing.T) {
	b := &Budget{Pushback: -1}
	t0 := time.Now()
	b.record("a.test", t0, budgetObservation{failure: true, status: http.StatusTooManyRequests})
	if got := b.retry("a.test", t0, t0, budgetObservation{}); got != attrs.Reason("") {
		t.Fatalf("admit = %q, want allowed: Pushback -1 holds nothing", got)
	}
}

// A hedge takes its token in the step that admits it, and only while the
// host holds more than half once it is taken: a fresh host admits two
// hedges, then refuses (budget), and a hedge not sent gives its token back,
// which admits the next. A hold refuses hedges as it does retries.
func TestBudgetAHedgeTakesItsTokenWhereItIsAdmitted(t *testing.T) {
	b := &Budget{}
	const key = "api.test"
	now := time.Now()
	var got []attrs.Reason
	var loans []budgetLoan
	for range 3 {
		loan, r := b.hedge(key, now)
		got, loans = append(got, r), append(loans, loan)
	}
	if want := []attrs.Reason{"", "", attrs.ReasonBudget}; !slices.Equal(got, want) {
		t.Fatalf("three hedges of a fresh host: %q, want %q", got, want)
	}
	if m := b.hosts[key].milli; m != 4000 {
		t.Errorf("the host holds %d milli-tokens after two hedges, want 4000", m)
	}
	b.giveBack(key, loans[0], now)
	if _, r := b.hedge(key, now); r != "" {
		t.Errorf("a hedge after one was given back: %q, want admitted", r)
	}
	b.record("held.test", now, budgetObservation{failure: true, status: 503, pushback: time.Second, hinted: true})
	if _, r := b.hedge("held.test", now); r != attrs.ReasonPushback {
		t.Errorf("a hedge to a held host: %q, want pushback", r)
	}
	checkBudget(t, b)
}

// Readings arrive slightly out of order (each caller reads its own clock):
// one taken before the first the budget saw is no hold, for a retry and
// for a hedge. Concurrent failures on a fresh host were refused as held.
func TestBudgetAReadingBeforeTheFirstIsNotHeld(t *testing.T) {
	b := &Budget{}
	now := time.Now()
	earlier := now.Add(-time.Microsecond)
	if r := b.retry("api.test", now, now, obs503); r != "" {
		t.Fatalf("first retry: %q, want admitted", r)
	}
	if r := b.retry("api.test", earlier, earlier, obs503); r != "" {
		t.Errorf("a retry read a microsecond before the first: %q, want admitted", r)
	}
	if _, r := b.hedge("other.test", earlier); r != "" {
		t.Errorf("a hedge read a microsecond before the first: %q, want admitted", r)
	}
	checkBudget(t, b)
}

// A retry's failure is charged and its admission decided in one step:
// however many operations fail together on a fresh host, two retries are
// admitted, the host's two.
func TestBudgetARetrysFailureIsChargedWhereItIsAdmitted(t *testing.T) {
	for _, concurrent := range []int{1, 8, 64} {
		b := &Budget{}
		var admitted atomic.Int32
		var wg sync.WaitGroup
		for range concurrent {
			wg.Go(func() {
				now := time.Now()
				if b.retry("api.test", now, now, obs503) == "" {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		if want := min(int32(concurrent), 2); admitted.Load() != want {
			t.Errorf("%d failures together: %d retries admitted, want %d", concurrent, admitted.Load(), want)
		}
		checkBudget(t, b)
	}
}

// A hedge's token is lent to the state it was taken from: successes that
// refill the host meanwhile do not make it fresh and forget the loan, and
// a token given back, or spent, leaves the host where it would be had the
// hedge that was given back taken nothing, the floor and the ceiling
// included.
func TestAHedgesTokenIsLentToTheStateItCameFrom(t *testing.T) {
	probe := budgetRequest("h.test")
	t.Run("refilled, then a failure, then given back", func(t *testing.T) {
		run := func(hedge bool) int {
			b := &Budget{}
			now := time.Now()
			var loan budgetLoan
			if hedge {
				var r attrs.Reason
				if loan, r = b.hedge("h.test", now); r != "" {
					t.Fatal("the hedge was refused")
				}
			}
			b.record("h.test", now, obs200)
			b.record("h.test", now, obs200)
			b.record("h.test", now, obs503)
			if hedge {
				b.giveBack("h.test", loan, now)
			}
			checkBudget(t, b)
			return b.Available(probe)
		}
		if without, with := run(false), run(true); with != without {
			t.Errorf("Available %d with a hedge given back, %d without the hedge", with, without)
		}
	})
	t.Run("a hold's end while a token is lent", func(t *testing.T) {
		b := &Budget{TokenRatio: 1}
		start := time.Now()
		at := func(d time.Duration) time.Time { return start.Add(d) }
		b.record("other", start, obs503) // the budget's first reading
		// Held until 1.5 s, listed in the wheel for second 2.
		b.record("h.test", at(500*time.Millisecond), budgetObservation{status: http.StatusTooManyRequests, pushback: time.Second, hinted: true})
		a, _ := b.hedge("h.test", at(1600*time.Millisecond))  // A
		b.record("h.test", at(1700*time.Millisecond), obs200) // refilled
		bl, _ := b.hedge("h.test", at(2100*time.Millisecond)) // B, as the wheel drains second 2
		b.giveBack("h.test", a, at(2200*time.Millisecond))    // A, not sent
		b.spent("h.test", bl, at(2300*time.Millisecond))      // B, sent
		checkBudget(t, b)
		if e, kept := b.hosts["h.test"]; !kept || e.milli != b.tokens()-tokenCost || len(e.loans.open) != 0 {
			t.Errorf("host %+v (kept %v), want B's token spent and nothing lent", e, kept)
		}
	})
	t.Run("idle in a full table while a token is lent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := &Budget{MaxHosts: 1}
			loan, _ := b.hedge("h.test", time.Now()) // lent, then idle
			time.Sleep(defaultBudgetIdleEviction + time.Second)
			if got := fail(b, "other.test"); got != attrs.ReasonHostLimit {
				t.Fatalf("another host while h lends a token: admit = %q, want host_limit (h kept)", got)
			}
			b.giveBack("h.test", loan, time.Now())
			checkBudget(t, b)
			if _, kept := b.hosts["h.test"]; kept {
				t.Error("h is kept in a fresh host's state once its token came back")
			}
			if got := fail(b, "other.test"); got != "" {
				t.Errorf("another host once h lends nothing: admit = %q, want allowed", got)
			}
		})
	})
	// Two loans that overlap, settled in either order: the host ends
	// where the hedge sent alone leaves it. Loans had no identity, and a
	// hedge sent before the other was given back lost that one's token.
	for _, aSentFirst := range []bool{false, true} {
		name := "A given back, then B spent: B's token is spent"
		if aSentFirst {
			name = "A spent, then B given back: A's token, spent, was refilled"
		}
		t.Run(name, func(t *testing.T) {
			b := &Budget{}
			now := time.Now()
			a, _ := b.hedge("h.test", now)
			b.record("h.test", now, obs200)
			b.record("h.test", now, obs200)
			bl, _ := b.hedge("h.test", now)
			want := b.tokens() - tokenCost
			if aSentFirst {
				b.spent("h.test", a, now)
				b.giveBack("h.test", bl, now)
				want = b.tokens()
			} else {
				b.giveBack("h.test", a, now)
				b.spent("h.test", bl, now)
			}
			checkBudget(t, b)
			e, kept := b.hosts["h.test"]
			if !kept {
				e.milli = b.tokens()
			}
			if e.milli != want || len(e.loans.open) != 0 {
				t.Errorf("host %+v (kept %v), want %d milli-tokens and nothing lent", e, kept, want)
			}
		})
	}
}

// A host that lends a token is never forgotten, but it does not shield the
// idle hosts behind it: with the table full, the idlest host that lends
// nothing and has been idle for the idle period makes room. The eviction
// looked at the idlest host alone, and refused a new host while a lending
// one was first.
func TestALendingHostLetsAnotherIdleHostBeForgotten(t *testing.T) {
	b := &Budget{MaxHosts: 2, IdleEviction: time.Minute}
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	loan, r := b.hedge("lending.test", at(0)) // its preparation stalls
	if r != "" {
		t.Fatal(r)
	}
	b.record("idle.test", at(time.Second), obs503)
	now := at(2 * time.Minute)
	if got := b.retry("new.test", now, now, obs503); got != "" {
		t.Errorf("a new host with idle.test idle for 119 s (IdleEviction 1m): %q, want admitted", got)
	}
	if _, kept := b.hosts["idle.test"]; kept {
		t.Error("idle.test is still kept")
	}
	if e, kept := b.hosts["lending.test"]; !kept || len(e.loans.open) != 1 {
		t.Errorf("lending.test: %+v (kept %v), want kept with its loan", e, kept)
	}
	b.giveBack("lending.test", loan, now)
	checkBudget(t, b)
}

// hostOf writes the port only when it is not the scheme's default
// (docs/budget.md), whichever of URL.Host and Host names the host, and the
// name in lower case without a trailing dot.
func TestHostOfDropsTheSchemesDefaultPort(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.test/x": "api.test", "https://api.test:443/x": "api.test", "https://api.test:8443/x": "api.test:8443",
		"http://api.test:80/x": "api.test", "http://api.test:443/x": "api.test:443", "https://[::1]:443/x": "[::1]",
		"http://127.0.0.3:8080/x": "127.0.0.3:8080",
		// One DNS name in any case, with or without the trailing dot.
		"https://API.Test/x": "api.test", "https://api.test./x": "api.test", "https://API.test.:443/x": "api.test",
		"http://api.test.:8080/x": "api.test:8080", "http://[::1]:8080/x": "[::1]:8080",
		// A port as a number: net/http dials ":080" as port 80.
		"http://api.test:080/x": "api.test", "http://api.test:08080/x": "api.test:8080", "http://[::1]:00/x": "[::1]:0",
		"http://api.test:0/x": "api.test:0",
		// An IPv6 literal in its one written form (a reviewer's find:
		// each spelling of ::1 was a dependency and a metric series).
		"http://[0:0:0:0:0:0:0:1]/x": "[::1]", "http://[::0001]:8080/x": "[::1]:8080", "https://[0::1]:0443/x": "[::1]",
		"http://[FE80::1%25En0]/x": "[fe80::1%En0]", "http://[2001:DB8::]/x": "[2001:db8::]",
	} {
		r, err := http.NewRequest(http.MethodGet, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostOf(r); got != want {
			t.Errorf("hostOf(%s) = %q, want %q", raw, got, want)
		}
	}
	r := &http.Request{URL: &url.URL{Scheme: "https", Opaque: "//x"}, Host: "api.test:443"}
	if got := hostOf(r); got != "api.test" {
		t.Errorf("hostOf of a request named by its Host = %q, want api.test", got)
	}
}
