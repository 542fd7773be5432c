// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"container/list"
	"math"
	"strings"
	"sync"
	"time"
)

// Hedging sends another attempt of a request that is safe to repeat while
// an earlier attempt has no answer yet: for the attempt that is merely
// slow, which a retry does nothing for ("The Tail at Scale", Dean and
// Barroso, 2013). The first answer whose verdict is not retry wins; the
// other attempts are canceled (superseded), their bodies drained or
// closed. Hedges are attempts: each has its number, its span and its
// event, and counts against the attempt limit, the operation's one
// deadline and the retry budget: it takes a budget token and a hedge from
// its dependency's rate where it is admitted, before its preparation, and
// gives them back if it is not sent; one that never leaves the client
// (canceled while it waits for a connection, or while its span starts)
// gives its budget token back and keeps its hedge (one that waits for an
// HTTP/2 stream, after net/http reported its connection, keeps its token:
// nothing proves it unsent; docs/hedging.md). A race's hooks and telemetry run on its attempts' goroutines, under no lock of
// otelretry's. Only safe methods and requests marked Intent.Repeatable are hedged, never a
// write (even under an idempotency-key contract: concurrent copies of one
// key are what servers handle worst), never a body that cannot be
// replayed, never a request that asks to switch protocols (an Upgrade
// named in its Connection field, as a websocket handshake, or a hedge its
// PrepareAttemptFunc makes one: its 101 is a connection of its own, which
// a hedge would open twice). Turn it on with WithHedging, or for one request with
// Intent.Hedging. The zero value hedges nothing.
type Hedging struct {
	// Delay is how long an attempt may go without its response headers
	// before its hedge is sent. With Adaptive, it is the delay until the
	// dependency was observed enough (20 answers), used as given (not kept between
	// MinDelay and MaxDelay); when 0, the delay until then is the longest
	// answer seen so far (MaxDelay before the first answer).
	Delay time.Duration
	// Adaptive takes the delay from the time to response headers observed
	// per dependency (the retry budget's key: the host by default): its
	// Quantile (0.95 when 0), between MinDelay and MaxDelay (1 ms and 2 s
	// when 0; a MaxDelay of 0 under a MinDelay above 2 s is MinDelay), in
	// fixed memory per dependency that follows the latest answers.
	Adaptive bool
	Quantile float64
	MinDelay time.Duration
	MaxDelay time.Duration
	// MaxHedges is how many hedges one operation may try, over its
	// retries (1 when 0), at most one fewer than its attempts; a hedge
	// refused at its preparation counts. Each hedge of a hedge waits the
	// delay again. Once the operation may send no more, no delay is
	// armed. Any value is safe: nothing is sized by it.
	MaxHedges int
	// MaxShare is the share of a dependency's hedged operations that may
	// send a hedge (0.05 when 0; at most 1, every one), counting those
	// that made their first call (one the throttle refused counts
	// nothing), with a burst of a hundred operations'
	// worth (at least one hedge), full when the Transport first meets the
	// dependency: when every request is slow (a brownout), hedging adds at
	// most that share of load to the dependency that is struggling, past
	// the burst (see docs/hedging.md). A hedge it refuses is recorded
	// (hedge_refused, reason hedge_limit). Operations with other shares
	// (an Intent's Hedging) earn their own into the dependency's one
	// allowance, which holds at most the burst of the operation that
	// begins: the dependency's hedges stay within a burst plus what its
	// operations earned, and an operation of a smaller share may send a
	// hedge one of a larger share earned.
	MaxShare float64
}

// Defaults of Hedging.
const (
	defaultHedgeQuantile = 0.95
	defaultHedgeMinDelay = time.Millisecond
	defaultHedgeMaxDelay = 2 * time.Second
	defaultMaxHedges     = 1
	defaultHedgeRate     = 0.05
)

// on reports whether h hedges at all.
func (h *Hedging) on() bool { return h != nil && (h.Delay > 0 || h.Adaptive) }

// withDefaults is h with its zero values replaced by the defaults.
func (h Hedging) withDefaults() Hedging {
	if !(h.Quantile > 0 && h.Quantile < 1) { // NaN too (an Intent's Hedging)
		h.Quantile = defaultHedgeQuantile
	}
	if h.MinDelay <= 0 {
		h.MinDelay = defaultHedgeMinDelay
	}
	if h.MaxDelay <= 0 {
		h.MaxDelay = defaultHedgeMaxDelay
	}
	if h.MaxDelay < h.MinDelay {
		h.MaxDelay = h.MinDelay
	}
	if h.MaxHedges <= 0 {
		h.MaxHedges = defaultMaxHedges
	}
	if !(h.MaxShare > 0 && h.MaxShare <= 1) {
		h.MaxShare = defaultHedgeRate
	}
	return h
}

// forOperation is h (withDefaults) for an operation of at most
// maxAttempts attempts: no more hedges than attempts after the first.
func (h Hedging) forOperation(maxAttempts int) Hedging {
	h = h.withDefaults()
	h.MaxHedges = min(h.MaxHedges, maxAttempts-1)
	return h
}

// hedgeBurst is how many hedges a dependency may send in a row beyond its
// rate: a hundred operations' worth, at least one.
func hedgeBurst(rate float64) float64 { return max(1, 100*rate) }

// minSamples is how many answers a dependency's adaptive delay waits for
// before it follows them.
const minSamples = 20

// hedger is a Transport's knowledge of its dependencies for hedging: per
// dependency, the time to response headers of its latest answers (a
// latency sketch) and the hedges it may still send (a token bucket). It
// holds at most defaultBudgetMaxHosts dependencies, in fixed memory each.
// As the Budget forgets a host, a full table forgets the dependency idle
// longest (no operation that may hedge begun) only once it has been idle
// for defaultBudgetIdleEviction, so that a flood of other hosts cannot
// hand a busy dependency a fresh burst; until then a dependency with no
// place sends no hedge (its rate reads as zero) and learns nothing.
type hedger struct {
	mu   sync.Mutex
	deps map[string]*list.Element // of *dependency
	lru  list.List                // the latest operation begun first
}

// dependency is what the hedger knows of one dependency.
type dependency struct {
	key    string
	sketch latencySketch
	tokens float64
	last   time.Time // when its latest operation that may hedge began
}

// placed returns key's dependency, made (with a full burst) or moved to
// the front as an operation to it began at now, or nil when the table is
// full and the dependency idle longest began one within
// defaultBudgetIdleEviction. The caller holds h.mu.
func (h *hedger) placed(key string, burst float64, now time.Time) *dependency {
	if h.deps == nil {
		h.deps = map[string]*list.Element{}
	}
	if e, ok := h.deps[key]; ok {
		d := e.Value.(*dependency)
		if now.After(d.last) {
			d.last = now
		}
		h.lru.MoveToFront(e)
		return d
	}
	if h.lru.Len() >= defaultBudgetMaxHosts {
		oldest := h.lru.Back()
		d := oldest.Value.(*dependency)
		if now.Sub(d.last) < defaultBudgetIdleEviction {
			return nil
		}
		delete(h.deps, d.key)
		h.lru.Remove(oldest)
	}
	d := &dependency{key: strings.Clone(key), tokens: burst, last: now} // the key may share the URL's memory
	h.deps[d.key] = h.lru.PushFront(d)
	return d
}

// known returns key's dependency, or nil when it has no place. The caller
// holds h.mu.
func (h *hedger) known(key string) *dependency {
	if e, ok := h.deps[key]; ok {
		return e.Value.(*dependency)
	}
	return nil
}

// begun notes that an operation to key that may hedge began at now and
// made its first call: it earns the dependency rate hedges, up to the
// burst.
func (h *hedger) begun(key string, rate float64, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.placed(key, hedgeBurst(rate), now); d != nil {
		d.tokens = min(d.tokens+rate, hedgeBurst(rate))
	}
}

// take takes one hedge from key's allowance, and reports whether there was
// one.
func (h *hedger) take(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.known(key)
	if d == nil || d.tokens < 1 {
		return false
	}
	d.tokens--
	return true
}

// refund gives back to key's allowance a hedge take lent to a hedge that
// was not sent, up to the burst: operations begun since may have refilled
// it.
func (h *hedger) refund(key string, rate float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.known(key); d != nil {
		d.tokens = min(d.tokens+1, hedgeBurst(rate))
	}
}

// observe records an attempt's time to response headers for key: took,
// or, for an attempt cut once its hedge won (cut), at least took, which is
// the delay its hedge was sent after; 0 records nothing.
func (h *hedger) observe(key string, took time.Duration, cut bool) {
	if took <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.known(key)
	switch {
	case d == nil:
	case cut:
		d.sketch.addCut(took)
	default:
		d.sketch.add(took)
	}
}

// delay is the hedge delay for key under p (withDefaults): fixed, or the
// observed quantile, clamped. Until minSamples were observed, it is Delay
// when set, else the longest answer seen so far (MaxDelay before the
// first): so few answers cannot tell a p95 from their longest, and the
// longest is the cautious reading of them that still hedges a fresh
// dependency. An operation slower than every one before it is a record,
// and n operations of one distribution hold about ln(n) records (3 in the
// first 20): fewer hedges than the rate's burst, which bounds them anyway.
func (h *hedger) delay(key string, p Hedging) time.Duration {
	if !p.Adaptive {
		return p.Delay
	}
	h.mu.Lock()
	var q time.Duration
	var ok bool
	if d := h.known(key); d != nil {
		q, ok = d.sketch.quantile(p.Quantile)
		if !ok && p.Delay <= 0 {
			q, ok = d.sketch.longest()
		}
	}
	h.mu.Unlock()
	switch {
	case ok:
		return min(max(q, p.MinDelay), p.MaxDelay)
	case p.Delay > 0:
		return p.Delay
	}
	return p.MaxDelay
}

// latencySketch is a histogram of durations on a log scale, in fixed
// memory: sketchBuckets buckets, each sketchGrowth times wider than the
// one before, from sketchFloor. When it holds sketchWindow observations,
// the next one halves every count first, so that it follows the latest
// answers: it holds at most a window of them and about half a window at
// least (see makeRoom), the latest always among them.
//
// It also holds the attempts that were cut once their hedge won, by the
// time they were cut. Such an attempt's latency is known only to be at
// least that time: a lower bound. Dropped, the very tail the hedges cut
// would vanish, and the quantile fall below the true one; counted as an
// answer of that time, it would raise the quantile on its own, race after
// race, when most first requests stall and their hedges win (each is cut
// at the delay plus its hedge's time, which sets the next delay). So the
// quantile counts it as a censored observation (Efron's
// redistribute-to-the-right, the Kaplan–Meier estimate): its weight goes,
// in equal shares, to the attempts held in later buckets, and to the
// longest answer held when there is none. A cut attempt can raise the
// quantile only as far as answers that took longer show it to be.
type latencySketch struct {
	counts [sketchBuckets]uint16 // answers
	cuts   [sketchBuckets]uint16 // attempts cut once their hedge won
	total  uint16                // answers and cuts held
}

const (
	sketchBuckets = 96
	sketchGrowth  = 1.2
	// The last bucket holds every duration from 100µs × 1.2^95 (56 min)
	// on: its bound is unknown, and a quantile in it is MaxDelay.
	sketchFloor  = 100 * time.Microsecond
	sketchWindow = 2048
)

var logGrowth = math.Log(sketchGrowth)

// bucketOf is the bucket of d.
func bucketOf(d time.Duration) int {
	if d <= sketchFloor {
		return 0
	}
	return min(int(math.Log(float64(d)/float64(sketchFloor))/logGrowth), sketchBuckets-1)
}

// upperBound is the upper bound of bucket i; the last one has none.
func upperBound(i int) time.Duration {
	if i >= sketchBuckets-1 {
		return math.MaxInt64
	}
	return time.Duration(float64(sketchFloor) * math.Pow(sketchGrowth, float64(i+1)))
}

// add holds an answer that took d.
func (s *latencySketch) add(d time.Duration) {
	s.makeRoom()
	s.counts[bucketOf(d)]++
}

// addCut holds an attempt cut, once its hedge won, after d.
func (s *latencySketch) addCut(d time.Duration) {
	s.makeRoom()
	s.cuts[bucketOf(d)]++
}

// makeRoom counts the observation about to be held, halving every count
// first when the sketch holds a window: halved after it, the newest
// observation went whenever it was alone in its bucket. An odd count
// rounds down, so an answer alone in its bucket is forgotten at the first
// halving after it, and the halves add up to half the window less half an
// observation per odd count. (Rounding odd counts up and down in turn, to
// hold half the window exactly, kept a lone stale answer through halving
// after halving: one slow answer set the hedge delay four times longer.)
func (s *latencySketch) makeRoom() {
	if s.total >= sketchWindow {
		s.total = 0
		for i := range s.counts {
			s.counts[i] /= 2
			s.cuts[i] /= 2
			s.total += s.counts[i] + s.cuts[i]
		}
	}
	s.total++
}

// longest is the upper bound of the bucket of the longest answer held,
// and whether there is one.
func (s *latencySketch) longest() (time.Duration, bool) {
	for i := sketchBuckets - 1; i >= 0; i-- {
		if s.counts[i] > 0 {
			return upperBound(i), true
		}
	}
	return 0, false
}

// quantile is the q-quantile of the durations held, with the cut attempts
// counted as latencySketch says: read inside the bucket that holds it, as
// far into the bucket (on its log scale) as the quantile's rank is into
// the bucket's weight, so that it moves with the answers by fractions of
// a bucket. Read at the bucket's upper bound instead, a quantile near a
// bound flipped between two delays 20 % apart as answers came and went,
// and a hedge then waited for the longer one while the shorter one sent
// the hedges: at equal extra load, a later hedge than one steady delay.
// It reports false until minSamples are held.
func (s *latencySketch) quantile(q float64) (time.Duration, bool) {
	if s.total < minSamples {
		return 0, false
	}
	// The weight of each answer of each bucket, once the cut attempts of
	// the buckets before it passed theirs on.
	var weight [sketchBuckets]float64
	right := float64(s.total) // the attempts held in the buckets after i
	passed, leftover, longest := 0.0, 0.0, -1
	for i := range sketchBuckets {
		right -= float64(s.counts[i]) + float64(s.cuts[i])
		each := 1 + passed
		weight[i] = float64(s.counts[i]) * each
		if s.counts[i] > 0 {
			longest = i
		}
		if cut := float64(s.cuts[i]) * each; right > 0 {
			passed += cut / right
		} else {
			leftover += cut
		}
	}
	if longest < 0 {
		return 0, false // nothing but cut attempts: no answer to place them by
	}
	weight[longest] += leftover
	rank := math.Ceil(q*float64(s.total)) - 1e-6
	seen := 0.0
	for i, w := range weight {
		if w > 0 && seen+w >= rank {
			return within(i, (rank-seen)/w), true
		}
		seen += w
	}
	return upperBound(sketchBuckets - 1), true
}

// within is the duration a share f (0 to 1) of the way through bucket i,
// on the log scale the buckets grow by; the last bucket, which has no
// bound, reads as its upper bound.
func within(i int, f float64) time.Duration {
	if i >= sketchBuckets-1 {
		return upperBound(i)
	}
	if i == 0 {
		return time.Duration(f * float64(upperBound(0)))
	}
	return time.Duration(float64(sketchFloor) * math.Pow(sketchGrowth, float64(i)+f))
}
