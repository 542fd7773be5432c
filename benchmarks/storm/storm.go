// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/benchmarks/internal/benchrun"
)

// options is everything one run depends on. Every configuration gets the
// same options, so the same traffic, server script and deadline.
type options struct {
	rate        int           // operations per second, open loop
	arrivals    string        // "poisson" (seeded, the same for every configuration) or "uniform" (a ticker)
	seed        uint64        // seed of the Poisson arrivals
	deadline    time.Duration // per operation, for every configuration
	maxInflight int           // operations in flight; an arrival above it is dropped (and counted)
	clients     int           // independent clients (each its own transports and budget) splitting the traffic

	healthy, brownout, outage503, outageHang, recovery time.Duration

	capacity         int           // concurrent requests served, healthy and recovery
	brownoutCapacity int           // concurrent requests served in the brownout
	service          time.Duration // service time of one admitted request
	hangCap          time.Duration // longest a hanging request is held (0: 2 × deadline)
	rejectCost       time.Duration // a rejected request holds capacity this long before its 503 (0: rejection is free, as specified)

	window time.Duration // recovery: sliding window of the success ratio
	step   time.Duration // recovery: resolution of the sliding window
	target float64       // recovery: success ratio the window must keep

	naiveBackoff        time.Duration
	naiveAttemptTimeout time.Duration // 0: deadline / 3

	configs []string
}

func defaultOptions() options {
	return options{
		rate:             200,
		arrivals:         "poisson",
		seed:             1,
		deadline:         time.Second,
		maxInflight:      5000,
		clients:          1,
		healthy:          2 * time.Second,
		brownout:         4 * time.Second,
		outage503:        3 * time.Second,
		outageHang:       3 * time.Second,
		recovery:         3 * time.Second,
		capacity:         16,
		brownoutCapacity: 3,
		service:          20 * time.Millisecond,
		window:           250 * time.Millisecond,
		step:             10 * time.Millisecond,
		target:           0.99,
		naiveBackoff:     10 * time.Millisecond,
		configs:          configNames,
	}
}

// smoke shortens a run to 150 ms per phase, for CI: it checks that
// everything runs, not what the figures are.
func (o *options) smoke() {
	o.deadline = 200 * time.Millisecond
	o.healthy, o.brownout, o.outage503, o.outageHang, o.recovery =
		150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond
	o.window = 100 * time.Millisecond
}

func (o *options) normalize() error {
	if o.rate <= 0 || o.deadline <= 0 || o.maxInflight <= 0 || o.capacity <= 0 || o.brownoutCapacity < 0 || o.service < 0 || o.clients <= 0 {
		return errors.New("storm: rate, deadline, max-inflight, capacity and clients must be positive")
	}
	if o.arrivals != "poisson" && o.arrivals != "uniform" {
		return fmt.Errorf("storm: arrivals must be poisson or uniform, not %q", o.arrivals)
	}
	if o.hangCap <= 0 {
		o.hangCap = 2 * o.deadline
	}
	if o.naiveAttemptTimeout <= 0 {
		o.naiveAttemptTimeout = o.deadline / 3
	}
	if o.step <= 0 {
		o.step = 10 * time.Millisecond
	}
	if o.window <= 0 || o.window > o.recovery {
		o.window = o.recovery
	}
	for _, c := range o.configs {
		if !slices.Contains(configNames, c) && !slices.Contains(diagnosticNames, c) {
			return fmt.Errorf("storm: unknown configuration %q (known: %s)", c, strings.Join(append(configNames, diagnosticNames...), ","))
		}
	}
	return nil
}

func (o *options) script() *script {
	return &script{phases: []phase{
		{name: "healthy", dur: o.healthy, mode: modeServe, limit: o.capacity},
		{name: "brownout", dur: o.brownout, mode: modeServe, limit: o.brownoutCapacity},
		{name: "outage-503", dur: o.outage503, mode: modeReject},
		{name: "outage-hang", dur: o.outageHang, mode: modeHang},
		{name: "recovery", dur: o.recovery, mode: modeServe, limit: o.capacity},
	}}
}

// outcome of one operation.
type outcome uint8

const (
	// outUnfinished: still running when the run stopped waiting (its
	// deadline + 5s): it passed its deadline, and is no success. The zero
	// value, so that a record nothing wrote is never one.
	outUnfinished outcome = iota
	outOK                 // 200 and the body read
	outStatus             // a response other than 200 (503, 504)
	outDeadline           // the operation deadline passed
	outError              // any other error (connection, a library's own refusal)
	outDropped            // never started: the in-flight cap was reached
)

type opRecord struct {
	sched   time.Duration // offset of the operation's arrival
	latency time.Duration
	out     outcome
}

// stats sums the operations of one phase (or several).
type stats struct {
	name                            string
	ops, attempts, ok               int
	status, deadline, errs, dropped int
	lat                             []time.Duration
}

func (s *stats) add(r opRecord, attempts int) {
	s.ops++
	s.attempts += attempts
	switch r.out {
	case outOK:
		s.ok++
	case outStatus:
		s.status++
	case outDeadline:
		s.deadline++
	case outUnfinished: // past its deadline; its latency is not known
		s.deadline++
		return
	case outError:
		s.errs++
	case outDropped:
		s.dropped++
		return
	}
	s.lat = append(s.lat, r.latency)
}

func (s *stats) amplification() float64 { return ratio(s.attempts, s.ops) }
func (s *stats) success() float64       { return ratio(s.ok, s.ops) }

// ratio is a over b, NaN (printed as such) when b is 0: a phase with no
// operation has no amplification and no success share, where a 0 would
// read as a measurement (none amplified, all failed).
func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// quantile is the nearest-rank quantile of the (sorted) latencies.
func (s *stats) quantile(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s.lat)))) - 1
	return s.lat[min(max(i, 0), len(s.lat)-1)]
}

// latencyMs is the q quantile of the latencies in milliseconds, NaN when
// no operation answered (no latency was measured).
func (s *stats) latencyMs(q float64) float64 {
	if len(s.lat) == 0 {
		return math.NaN()
	}
	return ms(s.quantile(q))
}

// result of one configuration.
type result struct {
	config    string
	clients   int
	phases    []*stats // one per script phase, then "outage" (both outage phases)
	outage    *stats
	brownout  *stats
	recovery  float64 // seconds; +Inf when the ratio never held to the end
	stray     int64   // requests the server could not attribute
	maxLag    time.Duration
	inflight  int64 // operations still running after the drain (must be 0)
	offered   int
	totalAtts int
	// minOutageOps is the fewest operations one client offered in the
	// outage-503 phase (the fleet bound needs at least 10).
	minOutageOps int
}

// run runs every configuration, one after another, each against its own
// server, and writes the table and the machine-readable lines to w.
func run(o options, w io.Writer) ([]result, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	sc := o.script()
	fmt.Fprintf(w, "storm: rate=%d op/s clients=%d arrivals=%s seed=%d deadline=%s phases=%s capacity=%d/%d (healthy/brownout) service=%s reject_cost=%s hang_cap=%s naive=3x(backoff %s, attempt timeout %s) window=%s target=%.2f loadavg=%s\n",
		o.rate, o.clients, o.arrivals, o.seed, o.deadline, phaseList(sc), o.capacity, o.brownoutCapacity, o.service, o.rejectCost, o.hangCap,
		o.naiveBackoff, o.naiveAttemptTimeout, o.window, o.target, benchrun.Loadavg())
	var results []result
	for _, name := range o.configs {
		r := runOne(o, name)
		results = append(results, r)
		runtime.GC()
	}
	printTable(w, results)
	printFleet(w, o, results)
	for _, r := range results {
		fmt.Fprintln(w, r.line())
	}
	return results, nil
}

func phaseList(sc *script) string {
	var parts []string
	for _, p := range sc.phases {
		parts = append(parts, fmt.Sprintf("%s:%s", p.name, p.dur))
	}
	return strings.Join(parts, ",")
}

func (r result) line() string {
	rec := "inf"
	if !math.IsInf(r.recovery, 1) {
		rec = fmt.Sprintf("%.2f", r.recovery)
	}
	return fmt.Sprintf("storm config=%s clients=%d amplification_outage=%.3f success_brownout=%.3f recovery_s=%s",
		r.config, r.clients, r.outage.amplification(), r.brownout.success(), rec)
}

// runOne offers the scripted traffic to one configuration.
func runOne(o options, name string) result {
	sc := o.script()
	arrivals := schedule(o.arrivals, o.rate, o.seed, sc.total())
	n := len(arrivals)
	srv := newServer(sc, n, o.service, o.hangCap)
	srv.rejectCost = o.rejectCost
	srv.verdict = name == verdictConfig
	// Operation i goes to client i mod clients: each client is a replica
	// with its own transports and budget, offered an equal share.
	clients := make([]*http.Client, o.clients)
	bases := make([]*http.Transport, o.clients)
	for c := range clients {
		clients[c], bases[c] = newClient(name, clientParams{
			deadline:            o.deadline,
			naiveBackoff:        o.naiveBackoff,
			naiveAttemptTimeout: o.naiveAttemptTimeout,
		})
	}

	recs := make([]opRecord, n)
	var (
		wg       sync.WaitGroup
		inflight atomic.Int64
		worstLag time.Duration
		// mu guards the records' outcomes: an operation still running
		// when the run stops waiting writes nothing after it (stopped).
		mu      sync.Mutex
		stopped bool
	)
	sc.start = time.Now()
	for i, sched := range arrivals {
		if d := time.Until(sc.start.Add(sched)); d > 0 {
			time.Sleep(d)
		} else if -d > worstLag {
			worstLag = -d
		}
		recs[i].sched = sched
		if inflight.Load() >= int64(o.maxInflight) {
			recs[i].out = outDropped
			continue
		}
		inflight.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inflight.Add(-1)
			latency, out := do(clients[i%len(clients)], srv.url(i), o.deadline)
			mu.Lock()
			defer mu.Unlock()
			if !stopped {
				recs[i].latency, recs[i].out = latency, out
			}
		}()
	}
	// Every operation ends by its deadline; wait for them, bounded.
	waitAtMost(&wg, o.deadline+5*time.Second)
	mu.Lock()
	stopped = true // the unfinished stay outUnfinished
	mu.Unlock()
	left := inflight.Load()
	srv.close()
	for _, b := range bases {
		b.CloseIdleConnections()
	}

	r := result{config: name, clients: o.clients, stray: srv.stray.Load(), maxLag: worstLag, inflight: left, offered: n, recovery: math.Inf(1)}
	perClient := make([]int, o.clients)
	for _, p := range sc.phases {
		r.phases = append(r.phases, &stats{name: p.name})
	}
	r.outage = &stats{name: "outage(all)"}
	for i, rec := range recs {
		pi := sc.at(rec.sched)
		a := int(srv.attempts[i].Load())
		r.phases[pi].add(rec, a)
		r.totalAtts += a
		if sc.phases[pi].name == "outage-503" || sc.phases[pi].name == "outage-hang" {
			r.outage.add(rec, a)
		}
		if sc.phases[pi].name == "outage-503" {
			perClient[i%o.clients]++
		}
	}
	r.minOutageOps = slices.Min(perClient)
	for _, s := range append(r.phases, r.outage) {
		sort.Slice(s.lat, func(a, b int) bool { return s.lat[a] < s.lat[b] })
	}
	r.brownout = r.phases[1]
	last := len(sc.phases) - 1
	r.recovery = recoveryTime(recs, sc.phaseStart(last), sc.phases[last].dur, o.window, o.step, o.target)
	return r
}

// waitAtMost waits for wg, at most d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(d):
	}
}

// schedule returns the arrival offsets of the operations over total: a
// Poisson process of the given mean rate drawn from seed (the same for every
// configuration of a run), or a ticker at exactly the rate. A ticker against
// a fixed service time resonates (a slot freed just after a tick stays idle
// until the next one), which makes sub-millisecond timing decide who gets
// it; Poisson arrivals do not.
func schedule(kind string, rate int, seed uint64, total time.Duration) []time.Duration {
	var at []time.Duration
	if kind == "uniform" {
		interval := time.Second / time.Duration(rate)
		for t := time.Duration(0); t < total; t += interval {
			at = append(at, t)
		}
		return at
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	mean := float64(time.Second) / float64(rate)
	for t := time.Duration(rng.ExpFloat64() * mean); t < total; t += time.Duration(rng.ExpFloat64() * mean) {
		at = append(at, t)
	}
	return at
}

// do runs one operation: a GET bounded by the deadline, the body read to
// the end.
func do(client *http.Client, url string, deadline time.Duration) (time.Duration, outcome) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, outError
	}
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	lat := time.Since(start)
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)):
		return lat, outDeadline
	case err != nil:
		return lat, outError
	case resp.StatusCode != http.StatusOK:
		return lat, outStatus
	}
	return lat, outOK
}

// recoveryTime is the time to recover after the outage ends: the earliest
// offset t from the start of the recovery phase such that every window
// [u, u+window) with u ≥ t, u on a grid of step, lying inside the phase and
// holding at least one operation (by arrival time), has a success ratio of
// at least target. It is 0 when no window fails, and +Inf when the last
// window of the phase still fails (not recovered within the phase) or no
// operation arrived from the recovery on (nothing shows it).
func recoveryTime(recs []opRecord, phaseStart, phaseDur, window, step time.Duration, target float64) float64 {
	end := phaseStart + phaseDur
	var in []opRecord
	for _, r := range recs {
		if r.sched >= phaseStart && r.sched < end {
			in = append(in, r)
		}
	}
	windows := 0
	if phaseDur >= window {
		windows = int((phaseDur-window)/step) + 1
	}
	lo, hi := 0, 0 // in[lo:hi] are the operations in the current window
	from, recovered := benchrun.Recovery(windows, func(k int) (bool, bool) {
		u := time.Duration(k) * step
		for lo < len(in) && in[lo].sched-phaseStart < u {
			lo++
		}
		for hi < len(in) && in[hi].sched-phaseStart < u+window {
			hi++
		}
		total, ok := hi-lo, 0
		for _, r := range in[lo:hi] {
			if r.out == outOK {
				ok++
			}
		}
		return total > 0, total > 0 && float64(ok)/float64(total) < target
	})
	if !recovered {
		return math.Inf(1)
	}
	return (time.Duration(from) * step).Seconds()
}

func printTable(w io.Writer, results []result) {
	fmt.Fprintf(w, "%-23s %-12s %6s %8s %6s %8s %8s %8s %6s %8s %6s %7s %9s\n",
		"config", "phase", "ops", "attempts", "amp", "success", "p50_ms", "p99_ms", "5xx", "deadline", "error", "dropped", "recover_s")
	for _, r := range results {
		rows := append(append([]*stats{}, r.phases...), r.outage)
		for _, s := range rows {
			rec := "-"
			if s.name == "recovery" {
				rec = "inf"
				if !math.IsInf(r.recovery, 1) {
					rec = fmt.Sprintf("%.2f", r.recovery)
				}
			}
			fmt.Fprintf(w, "%-23s %-12s %6d %8d %6.2f %8.3f %8.1f %8.1f %6d %8d %6d %7d %9s\n",
				r.config, s.name, s.ops, s.attempts, s.amplification(), s.success(),
				s.latencyMs(0.50), s.latencyMs(0.99), s.status, s.deadline, s.errs, s.dropped, rec)
		}
		if r.stray != 0 || r.inflight != 0 || r.maxLag > maxLag {
			fmt.Fprintf(w, "%-23s warning: stray_requests=%d unfinished_ops=%d max_arrival_lag=%s (over %s: the machine was busy, figures distorted)\n",
				r.config, r.stray, r.inflight, r.maxLag.Round(time.Millisecond), maxLag)
		}
	}
}

// maxLag is the arrival lag above which a configuration's run is flagged:
// the load generator could not keep its schedule, so the process was
// starved of CPU and latencies are not the clients' own.
const maxLag = 20 * time.Millisecond

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printFleet prints, per configuration, the figures the fleet rows of
// docs/benchmarks.md quote: the fewest outage operations of one client, the
// amplification in the 503 outage alone, and the brownout success against
// the no-retry client's in the same run (the budget must not cost more than
// 0.01 of it).
func printFleet(w io.Writer, o options, results []result) {
	base := -1.0
	for _, r := range results {
		if r.config == "no-retry" {
			base = r.brownout.success()
		}
	}
	fmt.Fprintf(w, "%-23s %7s %14s %10s %10s %9s %9s %9s\n",
		"config", "clients", "outage503_ops", "amp_503", "amp_outage", "brownout", "vs_noretry", "recover_s")
	for _, r := range results {
		vs := "-"
		if base >= 0 {
			vs = fmt.Sprintf("%+.3f", r.brownout.success()-base)
			if r.brownout.success() < base-0.01 {
				vs += "!"
			}
		}
		rec := "inf"
		if !math.IsInf(r.recovery, 1) {
			rec = fmt.Sprintf("%.2f", r.recovery)
		}
		ops, amp := fmt.Sprint(r.minOutageOps), fmt.Sprintf("%.3f", r.phases[2].amplification())
		if r.minOutageOps < minBoundOps {
			ops += "!" // too few for the fleet bound to say much
		}
		if budgeted[r.config] && r.phases[2].amplification() > outageBound(r.minOutageOps) {
			amp += "!"
		}
		fmt.Fprintf(w, "%-23s %7d %14s %10s %10.3f %9.3f %9s %9s\n",
			r.config, r.clients, ops, amp, r.outage.amplification(), r.brownout.success(), vs, rec)
	}
}

// minBoundOps is the fewest operations per client in the 503 outage for
// which the fleet bound is the one docs/budget.md gives (1.2 for 10).
const minBoundOps = 10

// outageBound is docs/budget.md's bound on the amplification of a
// sustained outage in which each client offered at least k operations:
// two retries per client in all, (k+2)/k.
func outageBound(k int) float64 {
	if k <= 0 {
		return math.Inf(1)
	}
	return float64(k+2) / float64(k)
}
