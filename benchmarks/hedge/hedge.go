// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otelretry/otelretry-go/benchmarks/internal/benchrun"
)

// options is everything one run depends on.
type options struct {
	rate        int           // operations per second, open loop
	seed        uint64        // repetition r uses seed+r
	reps        int           // interleaved repetitions
	deadline    time.Duration // per operation, for every configuration
	maxInflight int           // operations in flight; an arrival above it is dropped (and counted)

	warmup, tail, brownout int // operations per phase

	service     serviceDist // the tail phase's; the brownout's is service.stalled()
	budgetShare float64

	configs  []string
	jsonPath string
	plotPath string // where the sweep's plot goes ("" for none)
}

func defaultOptions() options {
	return options{
		rate:        1000,
		seed:        1,
		reps:        3,
		deadline:    2 * time.Second,
		maxInflight: 5000,
		warmup:      2000,
		// p99.9 of 10,000 samples has 10 above it.
		tail:     10000,
		brownout: 4000,
		service: serviceDist{
			fastMin:  2 * time.Millisecond,
			fastMean: time.Millisecond,
			// About 1 %, but not 1 %: at 1 % the p99 of 10,000 samples
			// would fall among the fast answers or among the stalls from
			// one repetition to the next (100 ± 10 stalls). At 0.7 %
			// (70 ± 8.3) it falls among the fast answers.
			stallProb:   0.007,
			stallFactor: 100,
		},
		budgetShare: 0.05,
		configs:     configNames(),
	}
}

// smoke shrinks a run to 160 operations per configuration at a rate a
// race-detector build keeps up with on a busy machine, and two
// repetitions, for CI: it checks that everything runs, not what the
// figures are.
func (o *options) smoke() {
	o.rate = 200
	o.warmup, o.tail, o.brownout = 20, 100, 40
	o.reps = 2
}

func (o *options) normalize() error {
	if o.rate <= 0 || o.reps <= 0 || o.deadline <= 0 || o.maxInflight <= 0 || o.warmup < 0 || o.tail <= 0 || o.brownout <= 0 {
		return errors.New("hedge: rate, reps, deadline, max-inflight, tail and brownout must be positive")
	}
	s := o.service
	if s.fastMin <= 0 || s.fastMean <= 0 || s.stallProb < 0 || s.stallProb >= 1 || s.stallFactor < 1 {
		return errors.New("hedge: fast-min and fast-mean must be positive, stall-prob in [0,1), stall-factor at least 1")
	}
	if o.budgetShare <= 0 || o.budgetShare > 1 {
		return errors.New("hedge: budget-share must be in (0,1]")
	}
	for _, c := range o.configs {
		if _, ok := lookupConfig(c); !ok {
			return fmt.Errorf("hedge: unknown configuration %q (known: %s)", c, strings.Join(configNames(), ","))
		}
	}
	// Every ratio needs the reference.
	if !slices.Contains(o.configs, reference) {
		o.configs = append([]string{reference}, o.configs...)
	}
	return nil
}

// warmupPhase is the phase that is reported but not judged.
const warmupPhase = "warmup"

func (o *options) plan() plan {
	return plan{
		{name: warmupPhase, ops: o.warmup, dist: o.service},
		{name: "tail", ops: o.tail, dist: o.service},
		{name: "brownout", ops: o.brownout, dist: o.service.stalled()},
	}
}

func (o *options) env() env {
	return env{hedgeDelay: o.service.quantile(0.95), budgetShare: o.budgetShare, deadline: o.deadline, service: o.service}
}

// slot is one configuration's turn in one repetition.
type slot struct{ rep, config int }

// interleave returns the order of the turns: repetition by repetition,
// every configuration once in each, the order rotated by one at each
// repetition so that none always runs first (after a pause, on a cold
// cache) or last.
func interleave(reps, configs int) []slot {
	order := make([]slot, 0, reps*configs)
	for r := range reps {
		for j := range configs {
			order = append(order, slot{rep: r, config: (r + j) % configs})
		}
	}
	return order
}

// poisson returns the arrival offsets of n operations: a Poisson process of
// the given mean rate drawn from seed, the same for every configuration.
func poisson(rate int, seed uint64, n int) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 0xa331))
	mean := float64(time.Second) / float64(rate)
	at := make([]time.Duration, n)
	var t float64
	for i := range at {
		t += rng.ExpFloat64() * mean
		at[i] = time.Duration(t)
	}
	return at
}

// outcome of one operation.
type outcome uint8

const (
	outOK      outcome = iota // 200 and the body read
	outFailed                 // anything else within the deadline, or the deadline
	outDropped                // never started: the in-flight cap was reached
)

type opRecord struct {
	latency time.Duration
	out     outcome
}

// turn is what one configuration's run in one repetition measured.
type turn struct {
	rep      int
	config   string
	phases   []phaseStats // one per plan phase
	stray    int64        // requests the server could not attribute
	maxLag   time.Duration
	inflight int64 // operations still running after the drain (must be 0)
	// dials counts the connections the client opened: on HTTP/1.1 an
	// attempt cancelled in flight (a hedge's loser) closes its connection.
	dials int64
	cpu   time.Duration // user and system time of the process during the turn
}

// run runs every turn, one after another, and writes the table (and the
// JSON, when asked) of the medians.
func run(o options, w io.Writer) (*report, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	e := o.env()
	p := o.plan()
	loadStart := benchrun.Loadavg()
	fmt.Fprintf(w, "hedge: rate=%d op/s seed=%d (rep r: seed+r) reps=%d deadline=%s phases=%s\n",
		o.rate, o.seed, o.reps, o.deadline, phaseList(p, o.rate))
	fmt.Fprintf(w, "hedge: service: %s + exp(mean %s), stalled with p=%.3g x%.0f; true p50=%s p95=%s p99=%s p99.9=%s; brownout p50=%s\n",
		o.service.fastMin, o.service.fastMean, o.service.stallProb, o.service.stallFactor,
		o.service.quantile(0.50), e.hedgeDelay, o.service.quantile(0.99), o.service.quantile(0.999),
		o.service.stalled().quantile(0.50))
	fmt.Fprintf(w, "hedge: hedge delay (true p95)=%s budget share=%.3g configs=%s loadavg=%s GOMAXPROCS=%d %s\n",
		e.hedgeDelay, o.budgetShare, strings.Join(o.configs, ","), loadStart, runtime.GOMAXPROCS(0), runtime.Version())

	var turns []turn
	for _, s := range interleave(o.reps, len(o.configs)) {
		c, _ := lookupConfig(o.configs[s.config])
		turns = append(turns, runTurn(o, p, e, s.rep, c))
		runtime.GC()
	}
	rep := summarize(o, e, p, turns)
	rep.GOMAXPROCS, rep.GoVersion, rep.LoadavgStart, rep.LoadavgEnd = runtime.GOMAXPROCS(0), runtime.Version(), loadStart, benchrun.Loadavg()
	rep.Curves = curves(rep, e)
	rep.EqualLoad = compareAtEqualLoad(rep.Curves)
	rep.Judged = judgeAtEqualLoad(rep, e)
	printTable(w, rep)
	printCurves(w, rep)
	printJudged(w, rep.Judged)
	if o.plotPath != "" && len(rep.Curves) > 0 {
		if err := os.WriteFile(o.plotPath, plotSVG(rep), 0o644); err != nil {
			return rep, err
		}
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func phaseList(p plan, rate int) string {
	var parts []string
	for _, ph := range p {
		parts = append(parts, fmt.Sprintf("%s:%d ops (~%s)", ph.name, ph.ops, (time.Duration(ph.ops)*time.Second/time.Duration(rate)).Round(100*time.Millisecond)))
	}
	return strings.Join(parts, ",")
}

// cpuTime is the user and system time the process has used (0 where
// getrusage is not available): hedging costs the client CPU too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runTurn offers repetition rep's traffic to one configuration, against
// its own server and a fresh transport.
func runTurn(o options, p plan, e env, rep int, c config) turn {
	seed := o.seed + uint64(rep)
	arrivals := poisson(o.rate, seed, p.total())
	srv := newServer(p, seed)
	var dials atomic.Int64
	base := newBase(&dials)
	client := &http.Client{Transport: c.transport(base, e)}

	recs := make([]opRecord, len(arrivals))
	var (
		wg       sync.WaitGroup
		inflight atomic.Int64
		worstLag time.Duration
	)
	cpu0 := cpuTime()
	start := time.Now()
	for i, at := range arrivals {
		if d := time.Until(start.Add(at)); d > 0 {
			time.Sleep(d)
		} else if -d > worstLag {
			worstLag = -d
		}
		if inflight.Load() >= int64(o.maxInflight) {
			recs[i].out = outDropped
			continue
		}
		inflight.Add(1)
		wg.Go(func() {
			defer inflight.Add(-1)
			recs[i] = do(client, srv.url(i), o.deadline)
		})
	}
	// Every operation ends by its deadline; wait for them, bounded.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(o.deadline + 5*time.Second):
	}
	t := turn{rep: rep, config: c.name, maxLag: worstLag, inflight: inflight.Load(), dials: dials.Load()}
	srv.close()
	base.CloseIdleConnections()
	select { // the server's close ends the requests still open
	case <-waited:
	case <-time.After(o.deadline):
	}
	t.stray = srv.stray.Load()
	t.cpu = cpuTime() - cpu0
	t.phases = measure(p, recs, srv)
	return t
}

// measure sums the operations of each phase.
func measure(p plan, recs []opRecord, srv *server) []phaseStats {
	stats := make([]phaseStats, len(p))
	for i := range stats {
		stats[i].name = p[i].name
	}
	for i, r := range recs {
		s := &stats[p.at(i)]
		s.ops++
		s.requests += int(srv.requests[i].Load())
		s.busy += time.Duration(srv.busy[i].Load())
		d, hedged := srv.hedgeAfter(i)
		if hedged {
			s.hedgeAfter = append(s.hedgeAfter, d)
		}
		if srv.stalled(i, 1) && r.out != outDropped {
			s.stalls++
			if !hedged {
				s.unhedged++
			}
		}
		switch r.out {
		case outDropped:
			s.dropped++
			continue
		case outFailed:
			s.failed++
		}
		s.lat = append(s.lat, r.latency)
	}
	for i := range stats {
		slices.Sort(stats[i].lat)
		slices.Sort(stats[i].hedgeAfter)
	}
	return stats
}

// do runs one operation: a GET bounded by the deadline, the body read to
// the end.
func do(client *http.Client, url string, deadline time.Duration) opRecord {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return opRecord{out: outFailed}
	}
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r := opRecord{latency: time.Since(start)}
	if err != nil || resp.StatusCode != http.StatusOK {
		r.out = outFailed
	}
	return r
}
