// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// options are a run's settings.
type options struct {
	writes         int // POSTs per configuration
	concurrency    int // writes in flight at once
	seed           uint64
	deadline       time.Duration // each write's, on its context, for every configuration
	attemptTimeout time.Duration // otelretry's
	slow           time.Duration // how long a slow answer takes
	rates          faultRates
	configs        []string
}

func defaultOptions() options {
	return options{
		writes: 2000, concurrency: 16, seed: 1,
		deadline: 5 * time.Second, attemptTimeout: 500 * time.Millisecond, slow: 700 * time.Millisecond,
		// 12 % of requests: well below the one attempt in three past which
		// the default retry budget refuses retries.
		rates:   faultRates{lost: 0.04, unavailable: 0.04, slow: 0.02, refused: 0.02},
		configs: configNames,
	}
}

// smoke shortens a run for CI: a few hundred writes, shorter times; it
// checks that the benchmark runs, its figures are meaningless.
func (o *options) smoke() {
	o.writes, o.concurrency = 200, 16
	o.deadline, o.attemptTimeout, o.slow = 3*time.Second, 100*time.Millisecond, 200*time.Millisecond
}

// told is what the caller of a write was told.
type told uint8

const (
	toldSuccess told = iota // a 2xx answer
	toldError               // an error or any other answer
	toldUnknown             // an error saying the outcome is unknown (otelretry.ErrOutcomeUnknown)
)

// writeResult is what became of one write.
type writeResult struct {
	applied int   // times the server applied it
	told    told  // what its caller was told
	seen    []int // what came of each request sent for it (network.requests)
	// outcome is otelretry's (from a Results slot), "" for the others.
	outcome attrs.Outcome
}

// result is one configuration's run.
type result struct {
	config   string
	writes   []writeResult
	drawn    [faultKinds]int // faults drawn
	stray    int             // requests for no write (the network's and the server's)
	conflict int             // 409s the server sent
	took     time.Duration
}

// run runs every configuration of o, one after another, and writes the
// report to w.
func run(o options, w io.Writer) ([]result, error) {
	for _, name := range o.configs {
		if newClient(name, o, http.DefaultTransport) == nil {
			return nil, fmt.Errorf("writes: unknown configuration %q (want %s)", name, strings.Join(configNames, ", "))
		}
	}
	refused, err := closedAddr()
	if err != nil {
		return nil, err
	}
	setup := setupOf()
	fmt.Fprintf(w, "writes: %d POSTs per configuration, %d in flight, seed %d, deadline %s, otelretry attempt timeout %s; "+
		"faults per request: %s; %s\n", o.writes, o.concurrency, o.seed, o.deadline, o.attemptTimeout, o.faultsText(), setup)
	var results []result
	for _, name := range o.configs {
		r, err := runConfig(name, o, refused)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	report(w, results)
	fmt.Fprintf(w, "load average at start %s, at end %s\n", setup.load, loadavg())
	return results, nil
}

func (o options) faultsText() string {
	pct := func(p float64) string { return strconv.FormatFloat(math.Round(1000*p)/10, 'f', -1, 64) + "%" }
	return fmt.Sprintf("answer lost after the write was applied %s, 503 before applying %s, answer after %s (slower than the attempt timeout) %s, connection refused %s: %s in all",
		pct(o.rates.lost), pct(o.rates.unavailable), o.slow, pct(o.rates.slow), pct(o.rates.refused), pct(o.rates.total()))
}

// runConfig sends o.writes POSTs through configuration name, o.concurrency
// at a time, each to a server of its own, and waits until the server has
// served every request it got.
func runConfig(name string, o options, refused string) (result, error) {
	srv, err := newServer(o.slow)
	if err != nil {
		return result{}, err
	}
	base := newBase()
	nw := newNetwork(base, refused, o.rates, o.seed)
	client := &http.Client{Transport: newClient(name, o, nw)}
	r := result{config: name, writes: make([]writeResult, o.writes)}
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
			for i := range next {
				r.writes[i] = send(client, srv, o.deadline, i)
			}
		})
	}
	for i := range o.writes {
		next <- i
	}
	close(next)
	wg.Wait()
	r.took = time.Since(start)
	if err := srv.close(); err != nil {
		return r, err
	}
	base.CloseIdleConnections()
	for i := range r.writes {
		r.writes[i].applied = srv.applications(i)
		r.writes[i].seen = nw.requests(i)
	}
	r.drawn, r.stray, r.conflict = nw.drawn, nw.stray+srv.stray, srv.conflictsSent()
	return r, nil
}

// send sends write i through client within deadline, as an application
// would: under an operation id of its own, with a Results slot to read
// otelretry's outcome from; it says what the caller was told.
func send(client *http.Client, srv *server, deadline time.Duration, i int) writeResult {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	ctx = otelretry.WithOperationID(ctx, "write-"+strconv.Itoa(i))
	var results otelretry.Results
	ctx = otelretry.WithResults(ctx, &results)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url(i), bytes.NewReader([]byte(`{"write":`+strconv.Itoa(i)+`,"amount":100}`)))
	if err != nil {
		panic(err) // a URL of the server's own
	}
	req.Header.Set("Content-Type", "application/json")
	var res writeResult
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	switch {
	case errors.Is(err, otelretry.ErrOutcomeUnknown) || results.OutcomeUnknown():
		// otelretry's word, also beside a failed answer it returned (a
		// 503 after an earlier attempt's answer was lost).
		res.told = toldUnknown
	case err != nil || resp.StatusCode < 200 || resp.StatusCode > 299:
		res.told = toldError
	}
	if last, ok := results.Last(); ok {
		res.outcome = last.Outcome
	}
	return res
}

// setup is the machine a run ran on.
type setup struct {
	cores int
	goV   string
	load  string // the load average at the start
}

func setupOf() setup {
	return setup{cores: runtime.NumCPU(), goV: runtime.Version(), load: loadavg()}
}

func (s setup) String() string {
	return fmt.Sprintf("%d cores (GOMAXPROCS %d), %s", s.cores, runtime.GOMAXPROCS(0), s.goV)
}

// loadavg is the machine's 1-, 5- and 15-minute load, printed so that a
// run distorted by other work on the machine can be recognized.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
