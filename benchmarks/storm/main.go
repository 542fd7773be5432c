// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	o := defaultOptions()
	smoke := flag.Bool("smoke", false, "CI mode: a few hundred ms per phase, shorter deadline; checks that it runs, figures are meaningless")
	short := flag.Bool("short", false, "same as -smoke")
	flag.IntVar(&o.rate, "rate", o.rate, "operations per second (open loop)")
	flag.StringVar(&o.arrivals, "arrivals", o.arrivals, "poisson (seeded; the same traffic for every configuration) or uniform (a ticker)")
	flag.Uint64Var(&o.seed, "seed", o.seed, "seed of the Poisson arrivals")
	flag.DurationVar(&o.deadline, "deadline", o.deadline, "operation deadline, the same for every configuration")
	flag.IntVar(&o.maxInflight, "max-inflight", o.maxInflight, "operations in flight at most; arrivals above are dropped and counted")
	flag.IntVar(&o.clients, "clients", o.clients, "independent clients (each its own transports and retry budget) splitting the same offered load: operation i goes to client i mod N")
	flag.DurationVar(&o.healthy, "healthy", o.healthy, "healthy phase length")
	flag.DurationVar(&o.brownout, "brownout", o.brownout, "brownout phase length")
	flag.DurationVar(&o.outage503, "outage-503", o.outage503, "outage phase answering 503 at once, length")
	flag.DurationVar(&o.outageHang, "outage-hang", o.outageHang, "outage phase not answering (requests hang until the client gives up), length")
	flag.DurationVar(&o.recovery, "recovery", o.recovery, "recovery phase length")
	flag.IntVar(&o.capacity, "capacity", o.capacity, "concurrent requests served when healthy")
	flag.IntVar(&o.brownoutCapacity, "brownout-capacity", o.brownoutCapacity, "concurrent requests served in the brownout")
	flag.DurationVar(&o.service, "service", o.service, "service time of an admitted request")
	flag.DurationVar(&o.rejectCost, "reject-cost", o.rejectCost, "a request over capacity holds capacity this long before its 503 (0: rejection is free, as specified)")
	flag.DurationVar(&o.hangCap, "hang-cap", o.hangCap, "longest a hanging request is held before a 504 (0: 2 x deadline)")
	flag.DurationVar(&o.window, "window", o.window, "recovery: sliding window")
	flag.DurationVar(&o.step, "step", o.step, "recovery: window step")
	flag.Float64Var(&o.target, "target", o.target, "recovery: success ratio every window must keep")
	flag.DurationVar(&o.naiveBackoff, "naive-backoff", o.naiveBackoff, "naive: constant pause between attempts")
	flag.DurationVar(&o.naiveAttemptTimeout, "naive-attempt-timeout", o.naiveAttemptTimeout, "naive: per-attempt timeout (0: deadline/3)")
	configs := flag.String("configs", strings.Join(o.configs, ","), "configurations to run, in order; diagnostic extras: "+strings.Join(diagnosticNames, ","))
	flag.Parse()
	o.configs = strings.Split(*configs, ",")
	if *smoke || *short {
		o.smoke()
	}
	if _, err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
