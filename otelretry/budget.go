package otelretry

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/internal/cowmap"
)

// Budget defaults.
const (
	DefaultBudgetRatio      = 0.1
	DefaultBudgetMinRetries = 10
	DefaultBudgetWindow     = 10 * time.Second
)

// budgetSlots is the number of slots a window is cut into: the window
// slides one slot (window/10) at a time. The last burstSlots of them are
// the recent part of the window, which is bounded too.
const (
	budgetSlots = 10
	burstSlots  = 2
)

// Budget bounds retries across all operations to one dependency, so that
// retries cannot multiply the load on a dependency that is already failing.
//
// Within any sliding window (default 10s), the retries to one host that did
// not succeed may not exceed the larger of
//
//	ratio × first attempts in the window   (default 10%)
//	minRetries                             (default 10)
//
// and the same bound holds within the most recent fifth of the window (2s
// by default), so that allowance saved up while the dependency was healthy
// cannot be spent all at once when it fails.
//
// A retry is charged when it is sent and refunded when it gets a 2xx or 3xx
// answer: what the budget bounds is wasted load. In a full outage no retry
// succeeds, so attempts stay within (1+ratio) × operations however long the
// outage lasts; in a brownout, retries that find spare capacity are not held
// against the client. The minimum is a floor, not an addition, so a fresh
// or quiet client can still retry a few times (the seed timeline's two
// retries, a short burst) without raising the cap for busy clients. A
// refused retry ends the operation with decision budget_exhausted.
//
// Counting is lock-free: each host has a ring of slots of atomic counters,
// reset lazily when time moves into them. Under contention the count may be
// off by the number of concurrent withdrawals at a slot boundary; it never
// blocks a request. Time is read from the monotonic clock.
//
// A Budget is safe for concurrent use. Share one between Transports with
// WithBudget to bound their combined retries.
type Budget struct {
	ratioMilli int64 // deposit per first attempt, in thousandths of a retry
	minRetries int64
	slotWidth  time.Duration
	keyOf      func(*http.Request) string
	start      time.Time
	now        func() time.Time
	windows    cowmap.Map[string, *budgetWindow]
}

// BudgetOption configures a Budget.
type BudgetOption interface{ applyBudget(*Budget) }

type budgetOptionFunc func(*Budget)

func (f budgetOptionFunc) applyBudget(b *Budget) { f(b) }

// BudgetRatio sets the share of first attempts that retries may add, in
// [0, 1]. Values outside are ignored. Default 0.1.
func BudgetRatio(r float64) BudgetOption {
	return budgetOptionFunc(func(b *Budget) {
		if r >= 0 && r <= 1 {
			b.ratioMilli = int64(r * 1000)
		}
	})
}

// BudgetMinRetries sets the retries always allowed per window, however
// quiet the client. Negative values are ignored. Default 10.
func BudgetMinRetries(n int) BudgetOption {
	return budgetOptionFunc(func(b *Budget) {
		if n >= 0 {
			b.minRetries = int64(n)
		}
	})
}

// BudgetWindow sets the sliding window. Values below 10ms are ignored.
// Default 10s.
func BudgetWindow(d time.Duration) BudgetOption {
	return budgetOptionFunc(func(b *Budget) {
		if d >= 10*time.Millisecond {
			b.slotWidth = d / budgetSlots
		}
	})
}

// BudgetKey sets how requests map to dependencies. Default: the request's
// host (URL host, else Host header). Keep the number of keys bounded. Nil
// is ignored.
func BudgetKey(f func(*http.Request) string) BudgetOption {
	return budgetOptionFunc(func(b *Budget) {
		if f != nil {
			b.keyOf = f
		}
	})
}

// NewBudget returns a retry budget; see Budget for the algorithm.
func NewBudget(opts ...BudgetOption) *Budget {
	return newBudget(time.Now, opts...)
}

func newBudget(now func() time.Time, opts ...BudgetOption) *Budget {
	b := &Budget{
		ratioMilli: int64(DefaultBudgetRatio * 1000),
		minRetries: DefaultBudgetMinRetries,
		slotWidth:  DefaultBudgetWindow / budgetSlots,
		keyOf:      hostOf,
		now:        now,
	}
	for _, o := range opts {
		if o != nil {
			o.applyBudget(b)
		}
	}
	// Bounded so that a client talking to unbounded hosts cannot grow the
	// map without limit; past it, each lookup gets a fresh window (fresh
	// windows allow minRetries, the same as a quiet host).
	b.windows.Limit = 10000
	b.start = now()
	return b
}

func hostOf(r *http.Request) string {
	if r.URL != nil && r.URL.Host != "" {
		return r.URL.Host
	}
	return r.Host
}

func (b *Budget) window(r *http.Request) *budgetWindow {
	return b.windows.Get(b.keyOf(r), func() *budgetWindow { return &budgetWindow{} })
}

func (b *Budget) epoch() int64 { return b.epochAt(b.now()) }

// epochAt is the slot number of now; a time before the Budget was made
// (another clock, as in a test bubble) counts as its first slot.
func (b *Budget) epochAt(now time.Time) int64 { return max(int64(now.Sub(b.start)/b.slotWidth), 0) }

// deposit counts the first attempt of an operation to r's dependency.
func (b *Budget) deposit(r *http.Request) { b.depositAt(r, b.now()) }

// depositAt is deposit with the clock already read: now must come from the
// Budget's clock (time.Now for every Budget made by NewBudget).
func (b *Budget) depositAt(r *http.Request, now time.Time) {
	b.window(r).slot(b.epochAt(now)).deposits.Add(1)
}

// withdraw takes one retry from r's dependency's budget and reports whether
// it was available.
func (b *Budget) withdraw(r *http.Request) bool {
	w, e := b.window(r), b.epoch()
	whole, recent := w.counts(e)
	if b.left(whole) < 1 || b.left(recent) < 1 {
		return false
	}
	w.slot(e).withdrawals.Add(1)
	return true
}

// refund gives back the retry of an attempt that got a 2xx or 3xx answer:
// the budget bounds retries that fail.
func (b *Budget) refund(r *http.Request) {
	b.window(r).slot(b.epoch()).refunds.Add(1)
}

// Available returns how many retries r's dependency may take now.
func (b *Budget) Available(r *http.Request) int {
	whole, recent := b.window(r).counts(b.epoch())
	return int(min(b.left(whole), b.left(recent)))
}

// left is how many more retries the counts allow.
func (b *Budget) left(c budgetCounts) int64 {
	allowed := max(c.deposits*b.ratioMilli, b.minRetries*1000) / 1000
	return max(allowed-max(c.charged, 0), 0)
}

// budgetWindow is one dependency's ring of slots.
type budgetWindow struct{ slots [budgetSlots]budgetSlot }

type budgetSlot struct {
	epoch       atomic.Int64 // epoch+1 of the counts held; 0 = never used
	deposits    atomic.Int64
	withdrawals atomic.Int64
	refunds     atomic.Int64
}

// budgetCounts are the counts of a span of slots: first attempts, and
// retries charged net of refunds (negative when refunds outlived their
// charges in the window).
type budgetCounts struct{ deposits, charged int64 }

// slot returns the slot for epoch e, resetting it if it still holds counts
// from an older epoch.
func (w *budgetWindow) slot(e int64) *budgetSlot {
	s := &w.slots[e%budgetSlots]
	if old := s.epoch.Load(); old != e+1 && s.epoch.CompareAndSwap(old, e+1) {
		s.deposits.Store(0)
		s.withdrawals.Store(0)
		s.refunds.Store(0)
	}
	return s
}

// counts adds the counts of the slots within the window ending at epoch e,
// and of its most recent burstSlots slots.
func (w *budgetWindow) counts(e int64) (whole, recent budgetCounts) {
	for i := range w.slots {
		s := &w.slots[i]
		se := s.epoch.Load() - 1
		if se < 0 || se > e || e-se >= budgetSlots {
			continue
		}
		c := budgetCounts{s.deposits.Load(), s.withdrawals.Load() - s.refunds.Load()}
		whole.deposits, whole.charged = whole.deposits+c.deposits, whole.charged+c.charged
		if e-se < burstSlots {
			recent.deposits, recent.charged = recent.deposits+c.deposits, recent.charged+c.charged
		}
	}
	return whole, recent
}
