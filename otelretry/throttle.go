// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Throttle defaults.
const (
	defaultThrottleK            = 2
	defaultThrottleWindow       = 2 * time.Minute
	defaultThrottleMaxRejection = 0.9
	// throttleSlots is how many slots the window is counted in: it slides
	// a slot at a time.
	throttleSlots = 20
)

// errInvalidThrottleSetting is reported through otel.Handle, wrapped with
// the setting and its value, when WithThrottle is given a Throttle with a
// setting out of its range, which reads as its default.
var errInvalidThrottleSetting = errors.New("otelretry: throttle setting ignored")

// Throttle is client-side adaptive throttling (Site Reliability
// Engineering, "Handling Overload"): each request to a dependency (the
// retry budget's key; the host by default, without a budget, and when the
// key is "") is refused locally, before anything about it starts, with
// probability
//
//	max(0, (requests − K × accepts) / (requests + 1))
//
// at most MaxRejection, counted over a sliding window: requests are every
// attempt the application made to the dependency (those the throttle
// refused included), accepts the answers other than 429 and 503, and other
// than transport errors. An attempt counts once it ends, as gRPC's
// adaptive throttler counts it, so that a burst to a fresh dependency is
// not refused for answers not back yet: a dependency that holds what it
// is sent is throttled once those attempts time out (a read's at the
// attempt timeout, a write's the policy may not repeat at the deadline).
// A dependency that answers keeps its requests
// flowing; one that is overloaded (it refuses, or times out) sees the
// load it gets fall to about K times what it accepts, so that its queue
// drains and overload ends when its cause ends, instead of outlasting it
// on the work of clients that gave up ("Metastable Failures in
// Distributed Systems", HotOS 2021). The caller's cancellation, and an
// attempt superseded by its hedge, count neither way; in a race no attempt
// won (a deadline ended it), every attempt counts.
//
// Its refusals count as requests (the book's rule, which keeps the load
// on a dependency that accepts part of it to K times its accepts), so
// they outlast the dependency's failures: once it recovers, the requests
// let through are accepted and the refusals fall as those accepts fill
// the window, ending about two windows after the recovery with traffic
// going on at the defaults, later the closer K or MaxRejection is to 1
// (docs/budget.md gives the spread). Keep the window shorter than the
// overloads it is to end.
//
// It is asked at the one admission point of every attempt (a first
// attempt, a retry, a hedge). A first attempt it refuses is never sent:
// the operation ends with decision throttled, reason throttle, and an
// *Error matching ErrThrottled; a refused retry ends the operation the
// same way, with the last answer; a refused hedge is recorded as
// hedge_refused, reason throttle. Turn it on with WithThrottle; it is off
// by default. Each otelretry layer it is given to asks it for the same
// request: give it to one layer, the one that retries (docs/layers.md).
//
// Memory is bounded per dependency (a fixed window of counts) and in
// dependencies, as the retry budget's host table is: at most 10 000
// (the budget's default MaxHosts), the one used least recently forgotten once it
// was idle for a window (its counts are then empty). A dependency that
// finds the table full of active ones is admitted, not counted: the
// throttle fails open, where the budget fails closed, since refusing a
// first attempt is refusing the work itself.
//
// The zero Throttle is ready to use, with the defaults: a setting left at
// its zero value reads as its default (&Throttle{Window: time.Minute}
// tunes one). A setting out of its range reads as its default too, and
// WithThrottle reports it through otel.Handle as NewTransport applies it,
// reading the settings as they are then. Set the settings before passing
// the Throttle to WithThrottle, and do not change them after. A Throttle
// is safe for concurrent use; share one between Transports with
// WithThrottle to throttle their combined load.
type Throttle struct {
	// K is how many times the accepted requests a dependency may be sent
	// before the throttle refuses any, above 1 and finite (NaN, +Inf and
	// 1 or below read as the default). Default 2, the SRE book's:
	// it lets twice what is accepted through, so a dependency that
	// recovers is seen to. The closer to 1, the longer the refusals
	// outlast a recovery; at 1 (invalid) they would never end while
	// traffic flows.
	K float64
	// Window is how long the requests and accepts are counted for. Default
	// 2 minutes, the SRE book's: short enough to follow an overload, long
	// enough that one bad second does not refuse the next minute's work.
	// A trigger shorter than a tenth of the window barely moves it. It is
	// counted in 20 slots of Window/20, rounded down to whole nanoseconds
	// (at least 1ns), and slides a slot at a time: an answer leaves the
	// count between 19 and 20 slots after it was counted (so a Window under
	// 20ns counts as 20ns, and one of 39ns as 20ns).
	Window time.Duration
	// MaxRejection bounds the probability of refusing a request, above 0
	// and at most 1. Default 0.9 (as failsafe-go's adaptive throttler):
	// however bad the window, one request in ten goes out, and sees the
	// dependency recover.
	MaxRejection float64

	// rand draws a number in [0, 1); nil: math/rand/v2.
	rand func() float64

	mu     sync.Mutex
	deps   map[string]*list.Element // of *throttleDep
	lru    list.List                // most recently used first
	origin time.Time
	begun  bool
}

// invalidSettings reports the settings out of their range, which read as
// their defaults.
func (t *Throttle) invalidSettings() error {
	var errs []error
	invalid := func(setting string, value any, want string) {
		errs = append(errs, fmt.Errorf("%w: Throttle.%s %v: want %s", errInvalidThrottleSetting, setting, value, want))
	}
	if t.K != 0 && !validK(t.K) {
		invalid("K", t.K, "above 1")
	}
	if t.Window < 0 {
		invalid("Window", t.Window, "above 0")
	}
	if t.MaxRejection != 0 && !validRejection(t.MaxRejection) {
		invalid("MaxRejection", t.MaxRejection, "above 0, at most 1")
	}
	return errors.Join(errs...)
}

func validK(k float64) bool { return k > 1 && !math.IsInf(k, 1) }

func validRejection(p float64) bool { return p > 0 && p <= 1 }

func (t *Throttle) kOf() float64 {
	if !validK(t.K) {
		return defaultThrottleK
	}
	return t.K
}

func (t *Throttle) windowOf() time.Duration {
	if t.Window <= 0 {
		return defaultThrottleWindow
	}
	return t.Window
}

func (t *Throttle) maxRejectionOf() float64 {
	if !validRejection(t.MaxRejection) {
		return defaultThrottleMaxRejection
	}
	return t.MaxRejection
}

// throttleDep is one dependency's window: its requests and accepts, per
// slot of window/throttleSlots, and when it was last used.
type throttleDep struct {
	key    string
	slots  [throttleSlots]throttleSlot
	newest int64 // the newest slot counted in
	last   time.Duration
}

type throttleSlot struct {
	at                int64 // the slot's number since the origin
	requests, accepts uint32
}

// counts returns the requests and accepts of the window that ends at
// slot now, or at the newest slot counted when that is later: a reading
// taken before the lock may be a little older than an answer another
// operation counted, and is read as the counts are filed (slot).
func (d *throttleDep) counts(now int64) (requests, accepts float64) {
	now = max(now, d.newest)
	for _, s := range d.slots {
		if s.at > now-throttleSlots && s.at <= now {
			requests += float64(s.requests)
			accepts += float64(s.accepts)
		}
	}
	return requests, accepts
}

// slot returns the slot of now, emptied when it held an older window's.
// A reading a window or more older than a slot already counted (a hedged
// race's answer, judged after a slow Classifier, keeps the time it was
// judged at) gets the newest slot: counted, and not over newer counts.
func (d *throttleDep) slot(now int64) *throttleSlot {
	if now <= d.newest-throttleSlots {
		now = d.newest
	}
	d.newest = max(d.newest, now)
	s := &d.slots[now%throttleSlots]
	if s.at != now {
		*s = throttleSlot{at: now}
	}
	return s
}

// rejection is the probability of refusing a request, by the rule.
func rejection(requests, accepts, k, maxRejection float64) float64 {
	return min(max(0, (requests-k*accepts)/(requests+1)), maxRejection)
}

// admit decides whether a request to key may go at now: false when the
// throttle refuses it, which counts it as a request not accepted.
func (t *Throttle) admit(key string, now time.Time) bool {
	draw := rand.Float64
	if t.rand != nil {
		draw = t.rand
	}
	x := draw() // before the lock: a drawing function is not ours
	t.mu.Lock()
	defer t.mu.Unlock()
	at, slot := t.clock(now)
	d := t.entry(key, at)
	if d == nil {
		return true // the table is full of active dependencies: fail open
	}
	requests, accepts := d.counts(slot)
	if x >= rejection(requests, accepts, t.kOf(), t.maxRejectionOf()) {
		return true // counted when it is answered (record)
	}
	d.slot(slot).requests++
	return false
}

// record counts the answer of a request to key at now: accepted, or not
// (a 429, a 503, a transport error).
func (t *Throttle) record(key string, now time.Time, accepted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, slot := t.clock(now)
	d := t.entry(key, at)
	if d == nil {
		return
	}
	s := d.slot(slot)
	s.requests++
	if accepted {
		s.accepts++
	}
}

// clock returns now as an offset from the first reading, and the slot it
// falls in. The caller holds t.mu.
func (t *Throttle) clock(now time.Time) (time.Duration, int64) {
	if !t.begun {
		t.origin, t.begun = now, true
	}
	at := max(now.Sub(t.origin), 0)
	return at, int64(at / max(t.windowOf()/throttleSlots, 1))
}

// entry returns key's dependency, made or moved to the front, or nil when
// the table is full and its least recently used dependency was used
// within a window. The caller holds t.mu.
func (t *Throttle) entry(key string, at time.Duration) *throttleDep {
	if t.deps == nil {
		t.deps = map[string]*list.Element{}
	}
	if e, ok := t.deps[key]; ok {
		d := e.Value.(*throttleDep)
		d.last = max(d.last, at)
		t.lru.MoveToFront(e)
		return d
	}
	if t.lru.Len() >= defaultBudgetMaxHosts {
		oldest := t.lru.Back()
		d := oldest.Value.(*throttleDep)
		if at-d.last < t.windowOf() {
			return nil
		}
		delete(t.deps, d.key)
		t.lru.Remove(oldest)
	}
	d := &throttleDep{key: strings.Clone(key), last: at} // the key may share the URL's memory
	for i := range d.slots {
		d.slots[i].at = -throttleSlots // empty
	}
	t.deps[d.key] = t.lru.PushFront(d)
	return d
}
