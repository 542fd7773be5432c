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
	smoke := flag.Bool("smoke", false, "CI mode: 200 writes per configuration, shorter times; checks that it runs, figures are meaningless")
	flag.IntVar(&o.writes, "writes", o.writes, "POSTs per configuration")
	flag.IntVar(&o.concurrency, "concurrency", o.concurrency, "writes in flight at once")
	flag.Uint64Var(&o.seed, "seed", o.seed, "seed of the fault schedule")
	flag.DurationVar(&o.deadline, "deadline", o.deadline, "each write's deadline (its context's), the same for every configuration")
	flag.DurationVar(&o.attemptTimeout, "attempt-timeout", o.attemptTimeout, "otelretry's attempt timeout")
	flag.DurationVar(&o.slow, "slow", o.slow, "how long a slow answer takes (longer than the attempt timeout)")
	flag.Float64Var(&o.rates.lost, "lost", o.rates.lost, "share of requests whose answer is lost after the write was applied (the connection closed)")
	flag.Float64Var(&o.rates.unavailable, "unavailable", o.rates.unavailable, "share of requests answered 503 before anything is applied")
	flag.Float64Var(&o.rates.slow, "slow-share", o.rates.slow, "share of requests answered after -slow")
	flag.Float64Var(&o.rates.refused, "refused", o.rates.refused, "share of requests whose connection is refused")
	configs := flag.String("configs", strings.Join(o.configs, ","), "configurations to run, in order")
	flag.Parse()
	o.configs = strings.Split(*configs, ",")
	if *smoke {
		o.smoke()
	}
	if _, err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
