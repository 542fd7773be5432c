// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// fleetClient is one replica: its own Transport, with default options and
// its own Budget, over its own base.
func fleetClient(base http.RoundTripper, opts ...otelretry.Option) *otelretry.Transport {
	all := append([]otelretry.Option{
		otelretry.WithBudget(&otelretry.Budget{}),
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
	}, opts...)
	return otelretry.NewTransport(base, all...)
}

// fleetGet runs one GET through rt and returns its status (0 on error).
func fleetGet(t *testing.T, rt http.RoundTripper, url string) int {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The fleet table, through the public API on virtual time: a full
// outage of 120 s, a base answering 503 after 5 ms, default options, each
// client its own Transport. Attempts per operation stay at most 1.2 in
// every row, and each client makes exactly a fresh client's two retries.
func TestBudgetFleetBound(t *testing.T) {
	shapes := []struct {
		clients int
		rate    float64
		outage  time.Duration
	}{
		{1, 200, 0}, {10, 20, 0}, {100, 2, 0}, {200, 1, 0}, {200, 0.2, 0},
		{20, 0.1, 100 * time.Second}, // exactly 10 operations each
	}
	var table strings.Builder
	table.WriteString("\n| clients × rate per client | operations | attempts per operation |\n|---|---:|---:|\n")
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%d×%g/s", s.clients, s.rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				outage := s.outage
				if outage == 0 {
					outage = 120 * time.Second
				}
				interval := time.Duration(float64(time.Second) / s.rate)
				bases := make([]*scripted.Transport, s.clients)
				ops := make([]int, s.clients)
				var wg sync.WaitGroup
				for c := range s.clients {
					bases[c] = scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusServiceUnavailable})
					tr := fleetClient(bases[c])
					offset := interval * time.Duration(c) / time.Duration(s.clients)
					wg.Go(func() {
						var opWG sync.WaitGroup
						time.Sleep(offset)
						for start := time.Now(); time.Since(start) < outage-offset; time.Sleep(interval) {
							ops[c]++
							opWG.Go(func() { fleetGet(t, tr, "http://dependency.test/") })
						}
						opWG.Wait()
					})
				}
				wg.Wait()
				var totalOps, totalAttempts int
				for c := range s.clients {
					calls := len(bases[c].Calls())
					totalOps += ops[c]
					totalAttempts += calls
					if ops[c] < 10 {
						t.Fatalf("client %d sent %d operations; the bound needs at least 10", c, ops[c])
					}
					if retries := calls - ops[c]; retries != 2 {
						t.Errorf("client %d made %d retries in the outage, want a fresh client's 2", c, retries)
					}
				}
				amp := float64(totalAttempts) / float64(totalOps)
				if amp > 1.2 {
					t.Errorf("attempts per operation = %.4f, want ≤ 1.2", amp)
				}
				fmt.Fprintf(&table, "| %d × %g/s | %d | %.4f |\n", s.clients, s.rate, totalOps, amp)
			})
		})
	}
	t.Log(table.String())
}

// healing is a base that answers 503 until healthyAt and 200 afterwards,
// except that a path starting with /flaky fails its first call.
type healing struct {
	healthyAt time.Time
	mu        sync.Mutex
	seen      map[string]bool
	calls     atomic.Int64
}

func (h *healing) RoundTrip(r *http.Request) (*http.Response, error) {
	h.calls.Add(1)
	select {
	case <-time.After(5 * time.Millisecond):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	status := http.StatusOK
	h.mu.Lock()
	switch {
	case time.Now().Before(h.healthyAt):
		status = http.StatusServiceUnavailable
	case strings.HasPrefix(r.URL.Path, "/flaky") && !h.seen[r.URL.Path]:
		h.seen[r.URL.Path] = true
		status = http.StatusServiceUnavailable
	}
	h.mu.Unlock()
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// A low-rate client after a 120 s outage: three successes later it retries
// a failure again (15 s at 0.2/s, 3 s at 1/s); two successes are not
// enough.
func TestBudgetRecoveryAfterOutage(t *testing.T) {
	for _, rate := range []float64{0.2, 1} {
		for _, successes := range []int{2, 3} {
			t.Run(fmt.Sprintf("%g/s after %d successes", rate, successes), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					interval := time.Duration(float64(time.Second) / rate)
					base := &healing{healthyAt: time.Now().Add(120 * time.Second), seen: map[string]bool{}}
					tr := fleetClient(base)
					for time.Now().Before(base.healthyAt) {
						go fleetGet(t, tr, "http://dependency.test/")
						time.Sleep(interval)
					}
					synctest.Wait()
					for range successes {
						if got := fleetGet(t, tr, "http://dependency.test/"); got != http.StatusOK {
							t.Fatalf("after the outage: status %d", got)
						}
						time.Sleep(interval - 5*time.Millisecond)
					}
					before := base.calls.Load()
					got := fleetGet(t, tr, "http://dependency.test/flaky")
					calls := base.calls.Load() - before
					want, wantStatus := int64(2), http.StatusOK
					if successes < 3 {
						want, wantStatus = 1, http.StatusServiceUnavailable
					}
					if calls != want || got != wantStatus {
						t.Fatalf("503 then 200 after %d successes: %d calls and status %d, want %d and %d", successes, calls, got, want, wantStatus)
					}
				})
			})
		}
	}
}

// One operation's Retry-After holds back the retries of the others to that
// host until it passes (budget_exhausted, reason pushback); first attempts
// are sent; the operation that received it retries after its pause.
func TestBudgetPushbackAcrossOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 5 * time.Millisecond, Status: 503, Header: http.Header{"Retry-After": {"2"}}}, // A, t=0
			{Delay: 5 * time.Millisecond, Status: 503},                                            // B, t=0.5s
			{Delay: 5 * time.Millisecond, Status: 200},                                            // C, t=1s
			{Delay: 5 * time.Millisecond, Status: 200},                                            // A's retry, t≈2s
		}, otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
		statuses := make(chan string, 3)
		run := func(name string) {
			resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), name), "http://api.test/"+name))
			if err != nil {
				statuses <- name + ":" + err.Error()
				return
			}
			resp.Body.Close()
			statuses <- fmt.Sprint(name, ":", resp.StatusCode)
		}
		go run("A")
		time.Sleep(500 * time.Millisecond)
		go run("B")
		time.Sleep(500 * time.Millisecond)
		go run("C")
		synctest.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		close(statuses)
		var got []string
		for s := range statuses {
			got = append(got, s)
		}
		if strings.Join(got, ",") != "B:503,C:200,A:200" {
			t.Fatalf("operations ended %v, want B:503 (held), C:200, A:200 after its pause", got)
		}
		var decisions []string
		for _, s := range h.attempts() {
			e := readEvent(t, s)
			decisions = append(decisions, fmt.Sprintf("%s/%d:%s/%s", e.OperationID, e.Attempt, e.Decision, attrOf(s, attrs.ReasonKey).AsString()))
		}
		want := "A/1:retry/retryable_status,B/1:budget_exhausted/pushback,C/1:return/response,A/2:return/response"
		if strings.Join(decisions, ",") != want {
			t.Fatalf("attempts %v, want %s", decisions, want)
		}
	})
}

// A 429 without Retry-After holds retries to its host for Pushback
// (1 s by default), the operation that received it included: with the
// default backoff it returns the 429; a pause of a second, a negative
// Pushback, or no budget at all lets it retry.
func TestBudget429WithoutRetryAfter(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  []otelretry.Option
		calls int
	}{
		{"default", nil, 1},
		{"pause of 1s", []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second))}, 2},
		{"Pushback -1", []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Pushback: -1})}, 2},
		// The hold is the budget's (README's options table says so).
		{"WithoutBudget", []otelretry.Option{otelretry.WithoutBudget()}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := scripted.New(scripted.Step{Status: http.StatusTooManyRequests}, scripted.Step{Status: http.StatusOK})
				tr := fleetClient(base, c.opts...)
				status := fleetGet(t, tr, "http://dependency.test/")
				if n := len(base.Calls()); n != c.calls {
					t.Fatalf("%d calls (status %d), want %d", n, status, c.calls)
				}
			})
		})
	}
}
