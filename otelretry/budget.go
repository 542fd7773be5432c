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
// slides one slot (window/10) at a time.
const budgetSlots = 10

// Budget bounds retries across all operations to one dependency, so that
// retries cannot multiply the load on a dependency that is already failing.
//
// Within any sliding window (default 10s), the retries to one host may not
// exceed the larger of
//
//	ratio × first attempts in the window   (default 10%)
//	minRetries                             (default 10)
//
// The ratio caps amplification under sustained failure: however long an
// outage lasts, attempts stay within (1+ratio) × operations. The minimum is
// a floor, not an addition, so a fresh or quiet client can still retry a
// few times (the seed timeline's two retries, a short burst) without
// raising that cap for busy clients. A refused retry ends the operation with
// decision budget_exhausted.
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
	deposits, withdrawals := w.sums(e)
	allowed := max(deposits*b.ratioMilli, b.minRetries*1000)
	if withdrawals*1000+1000 > allowed {
		return false
	}
	w.slot(e).withdrawals.Add(1)
	return true
}

// Available returns how many retries r's dependency may take now.
func (b *Budget) Available(r *http.Request) int {
	deposits, withdrawals := b.window(r).sums(b.epoch())
	return int(max(max(deposits*b.ratioMilli, b.minRetries*1000)/1000-withdrawals, 0))
}

// budgetWindow is one dependency's ring of slots.
type budgetWindow struct{ slots [budgetSlots]budgetSlot }

type budgetSlot struct {
	epoch       atomic.Int64 // epoch+1 of the counts held; 0 = never used
	deposits    atomic.Int64
	withdrawals atomic.Int64
}

// slot returns the slot for epoch e, resetting it if it still holds counts
// from an older epoch.
func (w *budgetWindow) slot(e int64) *budgetSlot {
	s := &w.slots[e%budgetSlots]
	if old := s.epoch.Load(); old != e+1 && s.epoch.CompareAndSwap(old, e+1) {
		s.deposits.Store(0)
		s.withdrawals.Store(0)
	}
	return s
}

// sums adds the counts of the slots within the window ending at epoch e.
func (w *budgetWindow) sums(e int64) (deposits, withdrawals int64) {
	for i := range w.slots {
		s := &w.slots[i]
		if se := s.epoch.Load() - 1; se >= 0 && e-se < budgetSlots && se <= e {
			deposits += s.deposits.Load()
			withdrawals += s.withdrawals.Load()
		}
	}
	return deposits, withdrawals
}
