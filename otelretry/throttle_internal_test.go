// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/otelretry/otelretry-go/attrs"
)

// The probability of refusing follows the SRE book's rule,
// max(0, (requests − K·accepts) / (requests + 1)), bounded by
// MaxRejection.
func TestThrottleRejectionFollowsTheRule(t *testing.T) {
	for _, tc := range []struct {
		requests, accepts, k, bound, want float64
	}{
		{0, 0, 2, 0.9, 0},
		{100, 100, 2, 0.9, 0},
		{100, 50, 2, 0.9, 0},
		{100, 40, 2, 0.9, 20.0 / 101},
		{100, 0, 2, 0.9, 0.9},
		{100, 0, 2, 1, 100.0 / 101},
		{100, 10, 3, 1, 70.0 / 101},
	} {
		if got := rejection(tc.requests, tc.accepts, tc.k, tc.bound); got != tc.want {
			t.Errorf("rejection(%v requests, %v accepts, K %v, bound %v) = %v, want %v", tc.requests, tc.accepts, tc.k, tc.bound, got, tc.want)
		}
	}
}

// refusals runs n requests of key at now through th and returns how many
// it refused; each admitted request is answered as accepted says.
func refusals(th *Throttle, key string, now time.Time, n int, accepted bool) int {
	refused := 0
	for range n {
		if !th.admit(key, now) {
			refused++
			continue
		}
		th.record(key, now, accepted)
	}
	return refused
}

// A request is refused when the draw falls below the rule's probability
// for the window's counts, and a refusal counts as a request not
// accepted: after 300 answers of which 100 accepted (K 2, bound 1), the
// probability is 100/301; once one request was refused, 101/302.
func TestThrottleRefusesAsTheRuleSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var x float64
		th := &Throttle{MaxRejection: 1}
		th.rand = func() float64 { return x }
		now := time.Now()
		for i := range 300 {
			th.record("api.test", now, i%3 == 0)
		}
		for _, step := range []struct {
			p      float64
			admits bool
		}{
			{100.0 / 301, false}, {101.0 / 302, true},
		} {
			x = step.p - 1e-9
			if !step.admits && th.admit("api.test", now) {
				t.Errorf("a draw just below %v admitted", step.p)
			}
			x = step.p + 1e-9
			if step.admits && !th.admit("api.test", now) {
				t.Errorf("a draw just above %v refused", step.p)
			}
		}
	})
}

// A throttle never refuses a dependency that accepts what it is sent.
func TestThrottleNeverRefusesWithNoFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{}
		for range 50 {
			if n := refusals(th, "api.test", time.Now(), 100, true); n != 0 {
				t.Fatalf("%d refused with every answer accepted", n)
			}
			time.Sleep(time.Second)
		}
	})
}

// Once accepts return, a throttle stops refusing within a window: its
// counts slide out, a slot at a time.
func TestThrottleRecoversOnceAcceptsReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{Window: 10 * time.Second}
		if n := refusals(th, "api.test", time.Now(), 200, false); n == 0 {
			t.Fatal("nothing refused in an outage")
		}
		outage := refusals(th, "api.test", time.Now(), 100, false)
		time.Sleep(10 * time.Second) // a window later
		after := refusals(th, "api.test", time.Now(), 100, true)
		if outage < 80 || after != 0 {
			t.Errorf("%d of 100 refused in the outage (want at least 80), %d of 100 a window later (want 0)", outage, after)
		}
	})
}

// Dependencies are throttled apart, in bounded memory: a full table of
// active dependencies admits a new one, uncounted (it fails open), and
// one idle for a window is forgotten to make room.
func TestThrottleTableIsBoundedAndFailsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{Window: time.Minute}
		now := time.Now()
		for i := range defaultBudgetMaxHosts {
			th.record(fmt.Sprint("dep-", i), now, false)
		}
		if n := refusals(th, "new.test", now, 50, false); n != 0 {
			t.Errorf("a new dependency in a full table of active ones: %d refused, want 0 (fail open)", n)
		}
		if _, ok := th.deps["new.test"]; ok {
			t.Error("the table kept a dependency past its bound")
		}
		time.Sleep(time.Minute)
		refusals(th, "later.test", time.Now(), 50, false)
		if _, ok := th.deps["later.test"]; !ok || len(th.deps) > defaultBudgetMaxHosts {
			t.Errorf("a window later: kept %v, %d dependencies", ok, len(th.deps))
		}
	})
}

// Many goroutines and dependencies at once, under -race.
func TestThrottleConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{Window: 5 * time.Second}
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 1))
				for range 500 {
					key := fmt.Sprint("dep-", rng.IntN(8))
					if th.admit(key, time.Now()) {
						th.record(key, time.Now(), rng.IntN(3) > 0)
					}
					if rng.IntN(20) == 0 {
						time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		th.mu.Lock()
		defer th.mu.Unlock()
		for key, e := range th.deps {
			d := e.Value.(*throttleDep)
			for _, s := range d.slots {
				if s.accepts > s.requests {
					t.Errorf("%s: a slot with %d accepts of %d requests", key, s.accepts, s.requests)
				}
			}
		}
	})
}

// Bad input, as every setting: K of 1 or below (at 1 the refusals, which
// count as requests, would never end while traffic flows), a negative
// window and a bound outside (0, 1] read as their defaults, and
// WithThrottle reports each, naming it, for NewTransport to hand to
// otel.Handle; what is in range is kept.
func TestThrottleSettingsOutOfRangeReadAsTheirDefaults(t *testing.T) {
	for _, c := range []struct {
		setting string
		th      *Throttle
	}{
		{"K", &Throttle{K: 0.5}}, {"K", &Throttle{K: 1}}, {"K", &Throttle{K: math.Inf(1)}}, {"K", &Throttle{K: math.NaN()}}, {"Window", &Throttle{Window: -time.Second}},
		{"MaxRejection", &Throttle{MaxRejection: -0.1}}, {"MaxRejection", &Throttle{MaxRejection: 2}},
	} {
		err := newConfig([]Option{WithThrottle(c.th)}).complaint()
		if !errors.Is(err, errInvalidThrottleSetting) || !strings.Contains(err.Error(), "Throttle."+c.setting) {
			t.Errorf("%s %+v: reported %v, want an errInvalidThrottleSetting naming it", c.setting, c.th, err)
		}
		if c.th.kOf() != defaultThrottleK || c.th.windowOf() != defaultThrottleWindow || c.th.maxRejectionOf() != defaultThrottleMaxRejection {
			t.Errorf("%s %+v: K %v, window %v, bound %v, want the defaults", c.setting, c.th, c.th.kOf(), c.th.windowOf(), c.th.maxRejectionOf())
		}
	}
	for _, th := range []*Throttle{{}, {K: 1.01}, {Window: time.Nanosecond}, {MaxRejection: 1}, {MaxRejection: 0.001}} {
		if err := newConfig([]Option{WithThrottle(th)}).complaint(); err != nil {
			t.Errorf("%+v: reported %v, a setting in range", th, err)
		}
	}
	if th := (&Throttle{K: 1.01, Window: time.Second, MaxRejection: 1}); th.kOf() != 1.01 || th.windowOf() != time.Second || th.maxRejectionOf() != 1 {
		t.Errorf("settings in range not kept: K %v, window %v, bound %v", th.kOf(), th.windowOf(), th.maxRejectionOf())
	}
}

// TestAdmissionCountsTheThrottleAtNow: the admission charges an answer to
// the budget at the time it came, which a slow Classifier or Backoff puts
// a window behind, and counts it to the throttle at now: a reading that
// late would land on the slot the window's newest counts are in, and
// wipe them.
func TestAdmissionCountsTheThrottleAtNow(t *testing.T) {
	th := &Throttle{Window: 200 * time.Millisecond} // 10 ms slots
	g := admission{throttle: th}
	h := admissionKeys{dep: "h"}
	start := time.Now()
	rejected := budgetObservation{status: http.StatusServiceUnavailable, failure: true}
	g.observe(h, start, start, budgetObservation{status: http.StatusOK, success: true})
	now := start.Add(200 * time.Millisecond)
	for range 50 {
		g.observe(h, now, now, rejected)
	}
	counts := func() float64 {
		th.mu.Lock()
		defer th.mu.Unlock()
		_, slot := th.clock(now)
		requests, _ := th.deps["h"].Value.(*throttleDep).counts(slot)
		return requests
	}
	before := counts()
	g.retry(h, start.Add(time.Millisecond), now, now, rejected) // answered 199 ms ago
	if after := counts(); after < before {
		t.Errorf("an answer counted late wiped the window: %v requests before, %v after", before, after)
	}
}

// The throttle's table keeps a copy of its key, not the caller's URL: it
// cloned the key for the entry but indexed the table under the caller's
// string, cut from the request URL, and so kept the whole URL alive,
// query and all (as the hedger did, TestTheHedgerKeepsItsOwnCopyOfTheKey).
func TestTheThrottleKeepsItsOwnCopyOfTheKey(t *testing.T) {
	var th Throttle
	url := "tenant.example.test/search?token=secret&q=" + strings.Repeat("x", 1<<16)
	key := url[:len("tenant.example.test")]
	th.admit(key, time.Time{})
	for k, e := range th.deps {
		if unsafe.StringData(k) == unsafe.StringData(key) || unsafe.StringData(e.Value.(*throttleDep).key) == unsafe.StringData(key) {
			t.Error("the throttle's table keeps the URL's memory through its key")
		}
	}
}

// A request the throttle refuses is refused before anything about it
// starts: its body is not read (a body that stalls ends it throttled, not
// at its deadline), and it is closed, as RoundTrip closes every body.
func TestAThrottledWriteDoesNotWaitForItsBody(t *testing.T) {
	base := baseFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: r}, nil
	})
	th := &Throttle{MaxRejection: 1, rand: func() float64 { return 0 }} // refuses whenever p > 0
	th.record("api.test", time.Now(), false)
	tr := NewTransport(base, WithThrottle(th), WithDeadline(time.Second))
	body, stalled := io.Pipe() // nothing is ever written: a read waits
	req, _ := http.NewRequest(http.MethodPut, "http://api.test/x", body)
	req.ContentLength = 5
	_, err := tr.RoundTrip(req)
	var oe *Error
	if !errors.As(err, &oe) || !errors.Is(err, ErrThrottled) || oe.Outcome != attrs.OutcomeThrottled {
		t.Fatalf("a stalled PUT the throttle refuses: %v, want throttled", err)
	}
	if _, err := stalled.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the refused request's body: a write after RoundTrip returned %v, want it closed", err)
	}
}

// The throttle counts its refusals as requests (the SRE book's: what the
// application asked for), so with traffic going on they outlast the
// dependency's failures: once it recovers, the few requests let through
// are accepted, and the refusals fall as those accepts fill the window,
// ending about two windows after the recovery at the defaults; the closer
// K or MaxRejection is to 1, the later (docs/budget.md gives the spread
// over 30 runs; here three seeds of the throttle's draws, each bounded by
// a window within that sample's spread; its latest ends are
// TestTheThrottlesLatestRecoveriesInTheDocumentedSample's). 32 operations
// a second, a 20 s outage, a 10 s window.
func TestARecoveredDependencyIsRefusedForUpToTwoWindows(t *testing.T) {
	const window = 10 * time.Second
	for _, tc := range []struct {
		name    string
		k, maxR float64
		windows int // the refusals end within
	}{
		{"defaults", 0, 0, 3},
		{"K 1.2", 1.2, 0, 10},
		{"MaxRejection 0.99", 0, 0.99, 5},
	} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s, seed %d", tc.name, seed), func(t *testing.T) {
				th := &Throttle{Window: window, K: tc.k, MaxRejection: tc.maxR, rand: rand.New(rand.NewPCG(seed, 1)).Float64}
				byWindow := refusalsAfterARecovery(t, th, 2*window, tc.windows+1)
				if byWindow[0] == 0 || byWindow[1] == 0 || byWindow[tc.windows] != 0 {
					t.Errorf("refused in each window after the recovery: %v of %d; want refusals in the first two (they outlast the failures) and none after %d",
						byWindow, 32*int(window/time.Second), tc.windows)
				}
			})
		}
	}
}

// docs/budget.md's sample of 30 runs and 30 others: its latest last
// refusals, the 11th window after the recovery at K 1.2 (seed 25) and the
// 10th at MaxRejection 0.99 (seed 53), are what these seeds give.
func TestTheThrottlesLatestRecoveriesInTheDocumentedSample(t *testing.T) {
	const window = 10 * time.Second
	for _, tc := range []struct {
		name    string
		k, maxR float64
		seed    uint64
		last    int // the window of the last refusal
	}{
		{"K 1.2", 1.2, 0, 25, 11},
		{"MaxRejection 0.99", 0, 0.99, 53, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := &Throttle{Window: window, K: tc.k, MaxRejection: tc.maxR, rand: rand.New(rand.NewPCG(tc.seed, 1)).Float64}
			byWindow := refusalsAfterARecovery(t, th, 2*window, tc.last+1)
			if byWindow[tc.last-1] == 0 || byWindow[tc.last] != 0 {
				t.Errorf("refused in each window after the recovery: %v; want the last refusal in window %d", byWindow, tc.last)
			}
		})
	}
}

// refusalsAfterARecovery sends 32 GETs a second through a Transport with
// th to a dependency that fails (503) for outage, then answers: the
// refusals in each of the windows windows after it recovered.
func refusalsAfterARecovery(t *testing.T, th *Throttle, outage time.Duration, windows int) []int {
	byWindow := make([]int, windows)
	synctest.Test(t, func(t *testing.T) {
		failing := true
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			status := http.StatusOK
			if failing {
				status = http.StatusServiceUnavailable
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := NewTransport(base, WithMaxAttempts(1), WithThrottle(th))
		second := func() (refused int) {
			for range 32 {
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/items", nil)
				resp, err := tr.RoundTrip(req)
				switch {
				case errors.Is(err, ErrThrottled):
					refused++
				case err != nil:
					t.Fatal(err)
				default:
					resp.Body.Close()
				}
			}
			time.Sleep(time.Second)
			return refused
		}
		for range outage / time.Second {
			second()
		}
		failing = false
		perWindow := int(th.Window / time.Second)
		for i := range windows * perWindow {
			byWindow[i/perWindow] += second()
		}
	})
	return byWindow
}

// TestAnAnswerWhoseHooksPanickedIsCounted: the dependency answered, then
// the Classifier or the Backoff that judges the answer panicked. The
// throttle still counts the answer (docs/budget.md: every attempt counts
// once it ends), as the rules alone judge it where the Classifier did not,
// on the race's goroutine too, and the budget is charged as without the
// panic.
func TestAnAnswerWhoseHooksPanickedIsCounted(t *testing.T) {
	panicking := func(int, Answer) time.Duration { panic("backoff") }
	for _, tc := range []struct {
		name             string
		status           int
		opts             []Option
		requests, accept float64
	}{
		{"a 503 whose Backoff panicked", http.StatusServiceUnavailable, []Option{WithBackoff(panicking)}, 1, 0},
		{"a 503 whose Classifier panicked", http.StatusServiceUnavailable, []Option{WithClassifier(func(Answer) Classification { panic("classifier") })}, 1, 0},
		{"a 200 whose Classifier panicked", http.StatusOK, []Option{WithClassifier(func(Answer) Classification { panic("classifier") })}, 1, 1},
		{"a hedged 503 whose Classifier panicked", http.StatusServiceUnavailable, []Option{WithHedging(Hedging{Delay: time.Second, MaxShare: 1}),
			WithClassifier(func(Answer) Classification { panic("classifier") })}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := &Throttle{Window: time.Hour}
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: tc.status, Body: http.NoBody, Request: r}, nil
				})
				tr := NewTransport(base, append([]Option{WithThrottle(th), WithMaxAttempts(3)}, tc.opts...)...)
				if p := roundTripPanic(tr, "http://api.test/x"); p == nil {
					t.Fatal("the hook's panic did not reach the caller")
				}
				th.mu.Lock()
				defer th.mu.Unlock()
				_, slot := th.clock(time.Now())
				if requests, accepts := th.deps["api.test"].Value.(*throttleDep).counts(slot); requests != tc.requests || accepts != tc.accept {
					t.Errorf("the throttle counted %v requests, %v accepts; want %v, %v", requests, accepts, tc.requests, tc.accept)
				}
			})
		})
	}
	t.Run("the budget", func(t *testing.T) {
		available := map[bool]int{}
		for _, panics := range []bool{true, false} {
			synctest.Test(t, func(t *testing.T) {
				b := &Budget{}
				backoff := WithBackoff(func(int, Answer) time.Duration { return time.Hour }) // the retry does not fit
				if panics {
					backoff = WithBackoff(panicking)
				}
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: r}, nil
				})
				roundTripPanic(NewTransport(base, WithBudget(b), WithMaxAttempts(2), WithDeadline(time.Second), backoff), "http://api.test/x")
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
				available[panics] = b.Available(req)
			})
		}
		if available[true] != available[false] {
			t.Errorf("tokens after a 503: %d when its Backoff panicked, %d when its retry did not fit; want the same charge", available[true], available[false])
		}
	})
}

// roundTripPanic sends a GET to url through rt and returns what it
// panicked with, nil when it did not.
func roundTripPanic(rt http.RoundTripper, url string) (recovered any) {
	defer func() { recovered = recover() }()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	return nil
}

// TestARaceAnswerWhoseClassifierPanickedIsCountedAsTheRaceJudgesIt: in a
// hedged race the Classifier runs before the race judges the answer, so
// the race counts an answer whose Classifier panicked: the throttle and
// the budget end as without the panic. The first attempt superseded by
// its hedge's 200 counts neither way; a hedge's 503 while the attempt it
// hedged is in flight costs no token beyond the hedge's.
func TestARaceAnswerWhoseClassifierPanickedIsCountedAsTheRaceJudgesIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second int               // the hedge's answer; the first attempt waits for its cut or 2 s, then 200
		panics func(Answer) bool // when the Classifier panics
	}{
		{"the first attempt, superseded by its hedge's 200", http.StatusOK, func(a Answer) bool { return a.Err != nil }},
		{"the hedge's 503, the first attempt in flight", http.StatusServiceUnavailable, func(a Answer) bool { return a.StatusCode == http.StatusServiceUnavailable }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[bool]gateCounts{}
			for _, panics := range []bool{false, true} {
				synctest.Test(t, func(t *testing.T) {
					th, b := &Throttle{Window: time.Hour}, &Budget{}
					base := hedgedBase(tc.second, 2*time.Second)
					classifier := func(a Answer) Classification {
						if panics && tc.panics(a) {
							panic("classifier")
						}
						return Classification{}
					}
					tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(3),
						WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithClassifier(classifier))
					done := make(chan any, 1)
					go func() { done <- roundTripPanic(tr, "http://api.test/x") }()
					time.Sleep(1500 * time.Millisecond) // the hedge answered; the first attempt is in flight or cut
					synctest.Wait()
					got[panics] = gateCountsOf(th, b)
					if p := <-done; (p != nil) != panics {
						t.Fatalf("panicked with %v; want a panic %v", p, panics)
					}
				})
			}
			if got[true] != got[false] {
				t.Errorf("with the Classifier's panic %+v, without %+v; want the same", got[true], got[false])
			}
		})
	}
}

// TestARacePanicLeavesTheCountsWhereTheRaceWould: the race judges answers in the
// order they were heard. A Classifier's panic in a race must leave the
// throttle and the budget where the race would have left them without
// the panic (docs/budget.md: the throttle counts every attempt but the
// caller's cancellation and one superseded by its hedge): a panic wins
// nothing, and the answers heard before it are judged as they came.
//
// Attempt 1 is sent at 0, its hedge at 1 s. Each answers at its time;
// each answer's Classifier sleeps for its delay, then panics (in the
// panic run, when told to) or returns.
func TestARacePanicLeavesTheCountsWhereTheRaceWould(t *testing.T) {
	type side struct {
		status   int
		answerAt time.Duration // since the attempt's start
		classify time.Duration // the Classifier's time
		panics   bool
	}
	for _, tc := range []struct {
		name         string
		first, hedge side
	}{
		// a1's 200 heard at 1.5 s (slow Classifier), the hedge's 503 heard at
		// 1.6 s, its Classifier panics at once: the race would judge a1's
		// 200 first (it won) and the 503 superseded.
		{"a later 503 panics while an earlier 200 is classified",
			side{200, 1500 * time.Millisecond, 500 * time.Millisecond, false},
			side{503, 600 * time.Millisecond, 0, true}},
		// the hedge's 503 heard at 1.2 s, its Classifier panics at 2 s; a1's
		// 503 heard at 1.8 s, classified at once, waits to be judged.
		{"the hedge's Classifier panics while a1's 503 waits to be judged",
			side{503, 1800 * time.Millisecond, 0, false},
			side{503, 200 * time.Millisecond, 800 * time.Millisecond, true}},
		// both Classifiers panic: a1's 503 at 1.5 s (+0.5 s), the hedge's at 1.6 s.
		{"both Classifiers panic",
			side{503, 1500 * time.Millisecond, 500 * time.Millisecond, true},
			side{503, 600 * time.Millisecond, 0, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameCountsWithThePanic(t, func(panics bool) (baseFunc, func(Answer) Classification) {
				var calls atomic.Int32
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					s := tc.first
					if calls.Add(1) > 1 {
						s = tc.hedge
					}
					select {
					case <-r.Context().Done():
						return nil, r.Context().Err()
					case <-time.After(s.answerAt):
					}
					h := http.Header{"X-Side": {"first"}}
					if s == tc.hedge {
						h.Set("X-Side", "hedge")
					}
					return &http.Response{StatusCode: s.status, Header: h, Body: http.NoBody, Request: r}, nil
				})
				classifier := func(a Answer) Classification {
					if a.Err != nil {
						return Classification{}
					}
					s := tc.first
					if a.Header.Get("X-Side") == "hedge" {
						s = tc.hedge
					}
					time.Sleep(s.classify)
					if panics && s.panics {
						panic("classifier")
					}
					return Classification{}
				}
				return base, classifier
			}, WithMaxAttempts(2))
		})
	}
}

// gateCounts is what the throttle (requests and accepts in its window) and
// the budget (tokens) hold for api.test once a run ended.
type gateCounts struct {
	requests, accepts float64
	tokens            int
}

// gateCountsOf reads th and b for api.test at the (virtual) now.
func gateCountsOf(th *Throttle, b *Budget) gateCounts {
	th.mu.Lock()
	_, slot := th.clock(time.Now())
	requests, accepts := th.deps["api.test"].Value.(*throttleDep).counts(slot)
	th.mu.Unlock()
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
	return gateCounts{requests, accepts, b.Available(req)}
}

// hedgedBase answers its first call 200 after wait, or its cut (a hedge
// of it may win), and every later call status at once.
func hedgedBase(status int, wait time.Duration) baseFunc {
	var calls atomic.Int32
	return func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) > 1 {
			return &http.Response{StatusCode: status, Body: http.NoBody, Request: r}, nil
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(wait):
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		}
	}
}

// sameCountsWithThePanic runs a GET to api.test, hedged after a second,
// twice on virtual time, with the base and the Classifier run makes (the
// Classifier panicking in the second run only), and reports a difference
// in what the throttle and the budget hold after each.
func sameCountsWithThePanic(t *testing.T, run func(panics bool) (baseFunc, func(Answer) Classification), opts ...Option) {
	t.Helper()
	got := map[bool]gateCounts{}
	for _, panics := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			th, b := &Throttle{Window: time.Hour}, &Budget{}
			base, classifier := run(panics)
			all := append([]Option{WithThrottle(th), WithBudget(b), WithHedging(Hedging{Delay: time.Second, MaxShare: 1}),
				WithClassifier(classifier)}, opts...)
			if p := roundTripPanic(NewTransport(base, all...), "http://api.test/x"); (p != nil) != panics {
				t.Fatalf("panicked with %v; want a panic %v", p, panics)
			}
			synctest.Wait()
			got[panics] = gateCountsOf(th, b)
		})
	}
	if got[true] != got[false] {
		t.Errorf("with the Classifier's panic %+v, without %+v; want the same", got[true], got[false])
	}
}

// Window's godoc: an answer leaves the count between 19 and 20 slots of
// Window/20 (whole nanoseconds) after it was counted, and a Window under
// 20ns, or of 39ns, counts as 20ns
// (a reviewer's find: "how long the requests and accepts are counted for"
// did not hold for a 10ns window, which counted a failure for 20ns).
func TestAnAnswerLeavesTheWindowAsItsGodocSays(t *testing.T) {
	for _, c := range []struct {
		window, countedTill, goneBy time.Duration
	}{
		{2 * time.Minute, 114*time.Second - 1, 120 * time.Second}, // 19 twentieths are 114 s
		{10 * time.Nanosecond, 19 * time.Nanosecond, 20 * time.Nanosecond},
		{39 * time.Nanosecond, 19 * time.Nanosecond, 20 * time.Nanosecond}, // twentieths of 1ns
	} {
		th := &Throttle{Window: c.window}
		t0 := time.Unix(1000, 0)
		th.record("api.test", t0, false)
		if r, _ := th.countsAt("api.test", t0.Add(c.countedTill)); r != 1 {
			t.Errorf("Window %s: the failure not counted %s after it (%v requests)", c.window, c.countedTill, r)
		}
		if r, _ := th.countsAt("api.test", t0.Add(c.goneBy)); r != 0 {
			t.Errorf("Window %s: the failure still counted %s after it", c.window, c.goneBy)
		}
	}
}

// countsAt is the requests and accepts dep's window holds at now.
func (t *Throttle) countsAt(dep string, now time.Time) (requests, accepts float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.deps[dep]
	if !ok {
		return 0, 0
	}
	_, slot := t.clock(now)
	return e.Value.(*throttleDep).counts(slot)
}
