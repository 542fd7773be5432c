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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/benchmarks/internal/benchrun"
)

// options is everything one run depends on. Every configuration gets the
// same options: the same traffic, server and trigger.
type options struct {
	rate        int    // operations per second, open loop, before and after the trigger
	triggerRate int    // operations per second during the trigger (a burst when above rate)
	seed        uint64 // seed of the Poisson arrivals
	clients     int    // independent clients splitting the traffic: operation i goes to client i mod clients

	deadline       time.Duration // per operation, for every configuration
	attemptTimeout time.Duration // per attempt, for every configuration that retries
	naiveBackoff   time.Duration // naive: the constant pause

	workers        int           // the server's capacity: requests served at once
	triggerWorkers int           // workers left during the trigger
	service        time.Duration // service time of one request
	queue          int           // the queue's bound: requests above it are refused at once

	before, trigger, after time.Duration // the run: steady load, the trigger, the time to recover

	window time.Duration // recovery: sliding window over arrivals
	step   time.Duration // recovery: the window's step
	target float64       // recovery: the share of goodput before the trigger a window must reach
	bucket time.Duration // the plot's resolution
	tail   time.Duration // goodput "at the end": the last tail of the run

	configs []string
	plot    string // where the SVG plot goes ("" for none)
}

func defaultOptions() options {
	return options{
		rate:           300,
		seed:           1,
		clients:        1,
		deadline:       time.Second,
		attemptTimeout: 200 * time.Millisecond,
		naiveBackoff:   10 * time.Millisecond,
		workers:        4,
		triggerWorkers: 1,
		service:        10 * time.Millisecond,
		queue:          1000,
		before:         5 * time.Second,
		trigger:        2 * time.Second,
		after:          25 * time.Second,
		window:         time.Second,
		step:           100 * time.Millisecond,
		target:         0.9,
		bucket:         250 * time.Millisecond,
		tail:           5 * time.Second,
		configs:        defaultConfigs(),
	}
}

// smoke shortens a run to about a second per configuration, for CI: it
// checks that everything runs, not what the figures are.
func (o *options) smoke() {
	o.before, o.trigger, o.after = 400*time.Millisecond, 200*time.Millisecond, 600*time.Millisecond
	o.window, o.step, o.bucket, o.tail = 200*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, 200*time.Millisecond
}

func (o *options) normalize() error {
	if o.triggerRate <= 0 {
		o.triggerRate = o.rate
	}
	if o.rate <= 0 || o.clients <= 0 || o.deadline <= 0 || o.workers <= 0 || o.queue <= 0 || o.service <= 0 {
		return errors.New("metastable: rate, clients, deadline, workers, queue and service must be positive")
	}
	if o.triggerWorkers < 0 || o.triggerWorkers > o.workers {
		return fmt.Errorf("metastable: trigger-workers must be within [0, %d]", o.workers)
	}
	if o.before <= 0 || o.trigger < 0 || o.after <= 0 || o.step <= 0 || o.bucket <= 0 {
		return errors.New("metastable: before, after, step and bucket must be positive, trigger not negative")
	}
	if !(o.target > 0 && o.target <= 1) { // NaN too: a bar of NaN passes every window
		return fmt.Errorf("metastable: target %v is no share: it must be within (0, 1]", o.target)
	}
	o.window = min(max(o.window, o.step), o.after)
	o.tail = min(max(o.tail, o.step), o.after)
	for _, d := range []time.Duration{o.before, o.trigger, o.after, o.window, o.tail} {
		if d%o.step != 0 {
			return fmt.Errorf("metastable: %s is not a multiple of the step %s", d, o.step)
		}
	}
	if o.total()%o.bucket != 0 {
		return fmt.Errorf("metastable: the run (%s) is not a multiple of the bucket %s", o.total(), o.bucket)
	}
	for _, c := range o.configs {
		if !available(c) {
			return fmt.Errorf("metastable: unknown configuration %q (known: %s)", c, strings.Join(defaultConfigs(), ","))
		}
	}
	return nil
}

func (o *options) total() time.Duration { return o.before + o.trigger + o.after }

// arrivals returns the operations' arrival offsets: a Poisson process,
// seeded (the same for every configuration), at rate outside the trigger
// and triggerRate within it. Exponential gaps are memoryless, so a gap
// that crosses into a period of another rate is drawn again from there.
func (o *options) arrivals() []time.Duration {
	rng := rand.New(rand.NewPCG(o.seed, 0x5eed))
	from, to := o.before, o.before+o.trigger
	var at []time.Duration
	for t := time.Duration(0); ; {
		rate, end := o.rate, from
		switch {
		case t >= to:
			end = o.total()
		case t >= from:
			rate, end = o.triggerRate, to
		}
		next := end
		if rate > 0 {
			next = t + time.Duration(rng.ExpFloat64()*float64(time.Second)/float64(rate))
		}
		if next >= end {
			if end >= o.total() {
				return at
			}
			t = end
			continue
		}
		at = append(at, next)
		t = next
	}
}

// opRecord is what the client saw of one operation.
type opRecord struct {
	sched time.Duration // offset of its arrival
	ok    bool          // a 200 and its body within the deadline
}

// result is one configuration's run.
type result struct {
	config string
	recs   []opRecord
	// attempts per operation, as the server counted them.
	attempts []int32
	// The server's work, in requests served (each one service time).
	served, abandoned, refused int64
	queuedAtEnd                int   // requests left queued when the run ended
	stray                      int64 // requests the server could not attribute
	unfinished                 int64 // operations still running after the drain (must be 0)
	maxLag                     time.Duration
}

// maxLag is the arrival lag above which a configuration's run is flagged:
// the load generator could not keep its schedule, so the process was
// starved of CPU and the figures are not the clients' own.
const maxLag = 20 * time.Millisecond

// run runs every configuration, one after another, each against its own
// server, and writes the report to w (and the plot to o.plot).
func run(o options, w io.Writer) ([]report, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "metastable: rate=%d op/s (trigger %d) clients=%d seed=%d deadline=%s attempt_timeout=%s workers=%d (trigger %d) service=%s queue=%d before=%s trigger=%s after=%s window=%s target=%.2f GOMAXPROCS=%d %s loadavg=%s\n",
		o.rate, o.triggerRate, o.clients, o.seed, o.deadline, o.attemptTimeout, o.workers, o.triggerWorkers, o.service, o.queue,
		o.before, o.trigger, o.after, o.window, o.target, runtime.GOMAXPROCS(0), runtime.Version(), benchrun.Loadavg())
	arrivals := o.arrivals()
	var reports []report
	for _, name := range o.configs {
		r := runOne(o, name, arrivals)
		reports = append(reports, analyze(o, r))
		runtime.GC()
	}
	printTable(w, o, reports)
	for _, r := range reports {
		fmt.Fprintln(w, r.line())
	}
	fmt.Fprintf(w, "metastable: loadavg at the end %s\n", benchrun.Loadavg())
	if o.plot != "" {
		if err := os.WriteFile(o.plot, plotSVG(o, reports), 0o644); err != nil {
			return reports, err
		}
	}
	return reports, nil
}

// runOne offers the traffic to one configuration, against a fresh server.
func runOne(o options, name string, arrivals []time.Duration) result {
	b := newBackend(o.workers, o.service, o.queue)
	b.trigger(o.before, o.before+o.trigger, o.triggerWorkers)
	srv := newServer(b, len(arrivals))
	clients := make([]*http.Client, o.clients)
	bases := make([]*http.Transport, o.clients)
	for c := range clients {
		clients[c], bases[c] = configs[name].client(o)
	}

	r := result{config: name, recs: make([]opRecord, len(arrivals))}
	var (
		wg       sync.WaitGroup
		inflight atomic.Int64
	)
	b.run()
	start := b.start
	for i, sched := range arrivals {
		if d := time.Until(start.Add(sched)); d > 0 {
			time.Sleep(d)
		} else {
			r.maxLag = max(r.maxLag, -d)
		}
		r.recs[i].sched = sched
		wg.Add(1)
		inflight.Add(1)
		go func() {
			defer wg.Done()
			defer inflight.Add(-1)
			r.recs[i].ok = do(clients[i%len(clients)], srv.url(i), o.deadline)
		}()
	}
	// The run lasts until its end, whenever the last arrival came.
	time.Sleep(time.Until(start.Add(o.total())))
	// Every operation ends by its deadline; wait for them, bounded.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(o.deadline + 5*time.Second):
	}
	r.unfinished = inflight.Load()
	r.queuedAtEnd = srv.close()
	<-waited // closing the server ended any left
	for _, t := range bases {
		t.CloseIdleConnections()
	}
	r.attempts = make([]int32, len(arrivals))
	for i := range r.attempts {
		r.attempts[i] = srv.attempts[i].Load()
	}
	r.served, r.abandoned, r.refused, r.stray = b.served.Load(), b.abandoned.Load(), b.refused.Load(), srv.stray.Load()
	return r
}

// do runs one operation: a GET bounded by the deadline, its body read to
// the end. It succeeds with a 200 and its body within the deadline.
func do(client *http.Client, url string, deadline time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && ctx.Err() == nil
}
