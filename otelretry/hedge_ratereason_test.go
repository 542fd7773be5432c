// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

type hedgeRateRun struct {
	calls      int64
	sent       int
	refused    map[string]int
	available  int
	statuses   map[int]int
	errs       int
	opAttempts map[int64]int
}

// runHedgeRate runs n operations in flight together; each first
// attempt answers 200 after 100 ms, every later call after 1 ms. Hedge
// delay 10 ms.
func runHedgeRate(t *testing.T, n int, hedging *otelretry.Hedging, prepare otelretry.PrepareAttemptFunc) hedgeRateRun {
	var calls atomic.Int64
	var mu sync.Mutex
	openBodies := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		i := calls.Add(1)
		wait := time.Millisecond
		if i <= int64(n) {
			wait = 100 * time.Millisecond
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		mu.Lock()
		openBodies++
		mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: &closeCountedBody{r: io.NopCloser(nil), close: func() { mu.Lock(); openBodies--; mu.Unlock() }}}, nil
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	budget := &otelretry.Budget{}
	opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithBudget(budget)}
	if hedging != nil {
		opts = append(opts, otelretry.WithHedging(*hedging))
	}
	if prepare != nil {
		opts = append(opts, otelretry.WithPrepareAttempt(prepare))
	}
	tr := otelretry.NewTransport(base, opts...)
	out := hedgeRateRun{refused: map[string]int{}, statuses: map[int]int{}, opAttempts: map[int64]int{}}
	var wg sync.WaitGroup
	var omu sync.Mutex
	for range n {
		wg.Go(func() {
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			omu.Lock()
			defer omu.Unlock()
			if err != nil {
				out.errs++
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			out.statuses[resp.StatusCode]++
		})
	}
	wg.Wait()
	time.Sleep(5 * time.Second)
	synctest.Wait()
	mu.Lock()
	if openBodies != 0 {
		t.Errorf("%d response bodies left open", openBodies)
	}
	mu.Unlock()
	for _, op := range spantest.Operations(rec.Ended()) {
		for _, ev := range op.Events() {
			switch ev.Name {
			case attrs.EventHedgeSent:
				out.sent++
			case "hedge_refused":
				r, _ := attrValue(ev.Attributes, attrs.ReasonKey)
				out.refused[r]++
			}
		}
		out.opAttempts[attrOf(op, "retry.attempts").AsInt64()]++
	}
	out.calls = calls.Load()
	out.available = budget.Available(get(t, t.Context(), "http://api.test/items"))
	return out
}

type closeCountedBody struct {
	r     io.ReadCloser
	close func()
	once  sync.Once
	n     atomic.Int32
}

func (b *closeCountedBody) Read(p []byte) (int, error) { return 0, io.EOF }
func (b *closeCountedBody) Close() error {
	if b.n.Add(1) == 1 {
		b.close()
	}
	return nil
}

// docs/hedging.md "A bounded extra load" and docs/decisions.md row 47: 20
// operations of a fresh dependency in flight together, all past their hedge
// delay, MaxShare 0.01 (burst max(1, 100 × 0.01) = 1): at most
// burst + MaxShare × N = 1.2 hedges, so one hedge sent and 19 hedge_refused
// (hedge_limit), none recorded as the budget's (a reviewer's find).
func TestTheHedgeRateRefusesAllButTheBurstInFlightTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20
		h := &otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01}
		got := runHedgeRate(t, n, h, nil)
		t.Logf("hedged: calls %d sent %d refused %v available %d statuses %v errs %d attempts %v",
			got.calls, got.sent, got.refused, got.available, got.statuses, got.errs, got.opAttempts)
		if got.sent != 1 || got.calls != n+1 {
			t.Errorf("hedges sent = %d, calls = %d; want 1 and %d", got.sent, got.calls, n+1)
		}
		if got.refused["hedge_limit"] != n-1 || len(got.refused) != 1 {
			t.Errorf("hedge_refused = %v; want hedge_limit: %d", got.refused, n-1)
		}
		if got.statuses[200] != n || got.errs != 0 {
			t.Errorf("statuses %v errs %d; want %d × 200", got.statuses, got.errs, n)
		}
	})
}

// docs/decisions.md rows 45 and 47: with one hedge out of a fresh host's
// 6 tokens (5 left), another hedge leaves 4, more than half: the budget
// does not refuse it, so every further refusal is the rate's
// (hedge_limit), never the budget's. From about 12 hedges admitted at one
// instant, some were recorded as the budget's, varying run to run: each
// took its budget token before the rate refused it, and those lent to the
// others counted against it meanwhile (a reviewer's find). The rate is
// asked first now.
func TestAHedgeTheRateRefusesIsNeverRecordedAsBudget(t *testing.T) {
	for _, n := range []int{12, 16, 20} {
		synctest.Test(t, func(t *testing.T) {
			h := &otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01}
			got := runHedgeRate(t, n, h, nil)
			if got.refused["budget"] != 0 || got.sent != 1 || got.refused["hedge_limit"] != n-1 {
				t.Errorf("n=%d: hedges sent %d, hedge_refused %v; want 1 sent and hedge_limit: %d", n, got.sent, got.refused, n-1)
			}
		})
	}
}
