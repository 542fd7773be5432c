// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// roundTripNoPanic runs one GET to url through rt and fails the test,
// instead of crashing it, when RoundTrip panics. It returns the status
// (0 on error).
func roundTripNoPanic(t *testing.T, rt http.RoundTripper, url string) (status int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("RoundTrip panicked: %v", r)
			status = -1
		}
	}()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func quietOptions(opts ...otelretry.Option) []otelretry.Option {
	return append([]otelretry.Option{
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
	}, opts...)
}

// cyclingBase answers each attempt, in turn, with the next status of its
// cycle.
type cyclingBase struct {
	mu       sync.Mutex
	statuses []int
	calls    int
}

func (c *cyclingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	status := c.statuses[c.calls%len(c.statuses)]
	c.calls++
	c.mu.Unlock()
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// randomStatuses is n statuses, each 503 with probability p, else 200,
// from a fixed seed.
func randomStatuses(p float64, n int) []int {
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := make([]int, n)
	for i := range statuses {
		statuses[i] = http.StatusOK
		if rng.Float64() < p {
			statuses[i] = http.StatusServiceUnavailable
		}
	}
	return statuses
}

// What the default Budget lets through under steady failures, one GET at
// a time, 2,000 operations (the numbers docs/budget.md and the Budget's
// godoc give): failures that come evenly stop the retries when more than
// one attempt in three fails, but the floor at half forgets the failures
// before the count last sat on it, so a failure after a run of three
// successes is retried. Whatever the mix, the retries stay within the
// tokens above half plus 0.5 for each success.
func TestBudgetSteadyFailureMixes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []int
		retries  int
	}{
		{"one in three fails", []int{200, 200, 503}, 999},
		{"two in three fail, evenly", []int{200, 503, 503}, 3},
		{"half fail, in runs of three", []int{200, 200, 200, 503, 503, 503}, 401},
		{"nine in ten fail, in runs", append([]int{200, 200, 200}, slices.Repeat([]int{503}, 27)...), 70},
		{"half fail, at random", randomStatuses(0.5, 10007), 236},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &cyclingBase{statuses: tc.statuses}
				rt := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(&otelretry.Budget{}))...)
				const operations = 2000
				successes := 0
				for range operations {
					if roundTripNoPanic(t, rt, "http://dep.test/") == http.StatusOK {
						successes++
					}
					time.Sleep(100 * time.Millisecond)
				}
				retries := base.calls - operations
				t.Logf("%d retries, %d successes in %d operations", retries, successes, operations)
				if retries != tc.retries {
					t.Errorf("%d retries, want %d", retries, tc.retries)
				}
				if bound := 3 + successes/2; retries > bound {
					t.Errorf("%d retries, over the bound of 3 + 0.5 x %d successes", retries, successes)
				}
			})
		})
	}
}

// Issue 25, item 13: the zero Budget works, with the default settings: a
// dependency that always fails gets a fresh host's two retries and then
// none, exactly as with the documented defaults written out, and nothing
// panics.
func TestBudgetZeroValueThroughTransport(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget func() *otelretry.Budget
	}{
		{"zero Budget", func() *otelretry.Budget { return &otelretry.Budget{} }},
		{"the defaults written out", func() *otelretry.Budget {
			return &otelretry.Budget{Tokens: 6, TokenRatio: 0.5, MaxHosts: 10000, Pushback: time.Second, IdleEviction: 10 * time.Minute}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reported := captureOtelErrors(t)
				b := c.budget()
				base := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusServiceUnavailable})
				tr := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(b))...)
				// Operation 1: 503, 503, 503 (two retries, max_attempts).
				// Operations 2 and 3: one attempt each (budget_exhausted).
				for i, wantCalls := range []int{3, 4, 5} {
					if got := roundTripNoPanic(t, tr, "http://dependency.test/"); got != http.StatusServiceUnavailable {
						t.Errorf("operation %d: status %d, want the 503", i+1, got)
					}
					if got := len(base.Calls()); got != wantCalls {
						t.Fatalf("after operation %d: %d calls, want %d", i+1, got, wantCalls)
					}
				}
				req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
				if got := b.Available(req); got != 0 {
					t.Errorf("Available after the outage = %d, want 0", got)
				}
				other, _ := http.NewRequest(http.MethodGet, "http://other.test/", nil)
				if got := b.Available(other); got != 2 {
					t.Errorf("Available for another host = %d, want a fresh host's 2", got)
				}
				if errs := reported(); len(errs) != 0 {
					t.Errorf("reported %v, want nothing", errs)
				}
			})
		})
	}
}

// The zero Budget shared by Transports used from many goroutines: no
// panic, no race, and the combined retries to one failing host are a
// fresh host's two.
func TestBudgetZeroValueConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &otelretry.Budget{}
		base := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusServiceUnavailable})
		const transports, ops = 4, 25
		var wg sync.WaitGroup
		for range transports {
			tr := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(b))...)
			for range ops {
				wg.Go(func() { roundTripNoPanic(t, tr, "http://dependency.test/") })
			}
		}
		wg.Wait()
		// Operations that fail at the same instant may each be admitted
		// before seeing the others' failures, so at most two retries each
		// of the first instant's operations; after that, none.
		if calls := len(base.Calls()); calls < transports*ops+2 || calls > 3*transports*ops {
			t.Fatalf("%d calls for %d operations", calls, transports*ops)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
		if got := b.Available(req); got != 0 {
			t.Errorf("Available after the outage = %d, want 0", got)
		}
	})
}

// The budget shared by two Transports, hammered by many goroutines over a
// churning set of hosts larger than its table, with 503s, 429s with and
// without Retry-After, timeouts and successes: no race, no panic, every
// refusal carries a budget reason, and once every host answers 200 again a
// new host gets its retries (the table does not stay full of recovered
// hosts).
func TestBudgetSharedAcrossTransportsSurvivesHostChurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := &otelretry.Budget{MaxHosts: 40}
		var healthy atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			code := 200
			h := http.Header{}
			if !healthy.Load() {
				switch len(r.URL.Host) % 4 {
				case 0:
					code = 503
				case 1:
					code, h["Retry-After"] = 429, []string{"2"}
				case 2:
					code = 429
				}
			}
			return &http.Response{StatusCode: code, Header: h, Body: http.NoBody, Request: r}, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		opts := []otelretry.Option{otelretry.WithBudget(budget), otelretry.WithTracerProvider(tp),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithDeadline(5 * time.Second)}
		trs := []*otelretry.Transport{otelretry.NewTransport(base, opts...), otelretry.NewTransport(base, opts...)}
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					host := fmt.Sprintf("h%d.test", (g*31+i*7)%300)
					resp, err := trs[(g+i)%2].RoundTrip(get(t, t.Context(), "http://"+host+"/"))
					if err == nil {
						resp.Body.Close()
					}
					time.Sleep(time.Duration(i%5) * 100 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		for _, s := range spantest.Attempts(rec.Ended()) {
			if attrOf(s, attrs.DecisionKey).AsString() == string(attrs.DecisionBudgetExhausted) {
				switch r := attrs.Reason(attrOf(s, attrs.ReasonKey).AsString()); r {
				case attrs.ReasonBudget, attrs.ReasonPushback, attrs.ReasonHostLimit:
				default:
					t.Errorf("budget_exhausted with reason %q", r)
				}
			}
		}
		// Recovery: three successes per host refill what one failure took.
		healthy.Store(true)
		time.Sleep(2 * time.Minute) // every hold passes
		for range 6 {
			for h := range 300 {
				resp, err := trs[0].RoundTrip(get(t, t.Context(), fmt.Sprintf("http://h%d.test/", h)))
				if err == nil {
					resp.Body.Close()
				}
			}
		}
		if n := budget.Available(get(t, t.Context(), "http://brand-new.test/")); n != 2 {
			t.Errorf("a new host after recovery gets %d retries, want 2 as on a fresh budget", n)
		}
	})
}

// docs/budget.md: a dependency, what the budget is kept per, is "the
// request's host as its URL writes it (api.example.com, 127.0.0.3:8080: the
// port only when it is not the scheme's default)". So https://api.test and
// https://api.test:443 are one dependency with one budget: in an outage, 16
// operations in flight together, half written each way, get the fresh
// host's two retries in all, not two per spelling.
func TestTheSchemesDefaultPortIsOneDependency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		budget := &otelretry.Budget{}
		tr := otelretry.NewTransport(base, otelretry.WithBudget(budget),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		const ops = 16
		var wg sync.WaitGroup
		for i := range ops {
			url := "https://api.test/items"
			if i%2 == 1 {
				url = "https://api.test:443/items"
			}
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
				if resp, err := tr.RoundTrip(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		plain, _ := http.NewRequest(http.MethodGet, "https://api.test/items", nil)
		port, _ := http.NewRequest(http.MethodGet, "https://api.test:443/items", nil)
		if extra := int(calls.Load()) - ops; extra > 2 {
			t.Errorf("the server saw %d requests beyond the %d operations' first, want at most 2: one host's budget (Available: %d for https://api.test, %d for https://api.test:443)",
				extra, ops, budget.Available(plain), budget.Available(port))
		}
	})
}
