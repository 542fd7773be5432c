package otelretry

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
)

func budgetRequest(host string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	return r
}

func TestBudgetFloorLetsAFreshClientRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget() // ratio 10%, floor 10 per 10s
		r := budgetRequest("a.test")
		b.deposit(r)
		for i := range 10 {
			if !b.withdraw(r) {
				t.Fatalf("retry %d refused; the floor allows 10", i+1)
			}
		}
		if b.withdraw(r) {
			t.Fatal("retry 11 allowed; the floor is 10 and 1 deposit adds 0.1")
		}
		if got := b.Available(r); got != 0 {
			t.Fatalf("Available = %d, want 0", got)
		}
	})
}

func TestBudgetRatioBoundsSustainedRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(BudgetMinRetries(0))
		r := budgetRequest("a.test")
		var allowed int
		// 1000 operations over 10s, each wanting two retries.
		for range 1000 {
			b.deposit(r)
			for range 2 {
				if b.withdraw(r) {
					allowed++
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		if allowed != 100 {
			t.Fatalf("retries allowed = %d, want exactly 10%% of 1000 first attempts", allowed)
		}
	})
}

func TestBudgetWindowSlides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(BudgetMinRetries(2), BudgetWindow(time.Second))
		r := budgetRequest("a.test")
		if !b.withdraw(r) || !b.withdraw(r) || b.withdraw(r) {
			t.Fatal("want exactly the floor of 2 retries in the first window")
		}
		time.Sleep(500 * time.Millisecond)
		if b.withdraw(r) {
			t.Fatal("withdrawals from 0.5s ago are still in the 1s window")
		}
		time.Sleep(600 * time.Millisecond) // 1.1s: the first slot left the window
		if !b.withdraw(r) || !b.withdraw(r) || b.withdraw(r) {
			t.Fatal("want the floor again once old withdrawals slid out")
		}
	})
}

func TestBudgetIsPerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(BudgetMinRetries(1))
		a, c := budgetRequest("a.test"), budgetRequest("c.test")
		if !b.withdraw(a) || b.withdraw(a) {
			t.Fatal("host a: want one retry")
		}
		if !b.withdraw(c) {
			t.Fatal("host c has its own budget")
		}
	})
}

func TestBudgetOptionsIgnoreInvalidValues(t *testing.T) {
	b := NewBudget(BudgetRatio(-1), BudgetRatio(2), BudgetMinRetries(-5), BudgetWindow(time.Nanosecond), BudgetKey(nil), nil)
	if b.ratioMilli != 100 || b.minRetries != DefaultBudgetMinRetries || b.slotWidth != time.Second || b.keyOf == nil {
		t.Fatalf("invalid options changed the budget: %+v", b)
	}
}

func TestBudgetRefundsRetriesThatSucceed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(BudgetMinRetries(1), BudgetRatio(0))
		r := budgetRequest("a.test")
		if !b.withdraw(r) || b.withdraw(r) {
			t.Fatal("want exactly one retry before any refund")
		}
		b.refund(r) // that retry got a 200
		if !b.withdraw(r) {
			t.Fatal("a refunded retry must free its place")
		}
		if b.withdraw(r) {
			t.Fatal("only failed retries are held against the budget; one is outstanding")
		}
	})
}

// After a healthy stretch the whole window holds allowance for 10% of its
// first attempts, but a sudden failure may spend only what the recent fifth
// of the window allows.
func TestBudgetRecentWindowStopsABurstOfSavedAllowance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget() // ratio 10%, floor 10, 10s window, 2s recent
		r := budgetRequest("a.test")
		for range 1000 { // 100 first attempts per second, no retries
			b.deposit(r)
			time.Sleep(10 * time.Millisecond)
		}
		if got := b.Available(r); got != 10 {
			// whole window: 1000 deposits allow 100; recent 2s: slot 9's
			// 100 deposits and slot 10's none allow max(10, 10) = 10.
			t.Fatalf("Available after 10s healthy = %d, want 10 (recent bound)", got)
		}
		allowed := 0
		for range 100 {
			if b.withdraw(r) {
				allowed++
			}
		}
		if allowed != 10 {
			t.Fatalf("a sudden burst took %d retries, want 10", allowed)
		}
	})
}

func TestTransportRefundsASuccessfulRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Room for one outstanding failed retry; each operation retries once
		// and succeeds, so without the refund the second would be refused.
		b := NewBudget(BudgetMinRetries(1), BudgetRatio(0))
		var steps []scripted.Step
		for range 3 {
			steps = append(steps, scripted.Step{Status: 503}, scripted.Step{Status: 200})
		}
		tr := NewTransport(scripted.New(steps...), WithBudget(b), WithBackoff(ConstantBackoff(time.Millisecond)))
		for i := range 3 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("operation %d: %v %v; want the 200 after one refunded retry", i+1, resp, err)
			}
			resp.Body.Close()
		}
	})
}
