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
	smoke := flag.Bool("smoke", false, "CI mode: about a second per configuration; checks that it runs, figures are meaningless")
	short := flag.Bool("short", false, "same as -smoke")
	flag.IntVar(&o.rate, "rate", o.rate, "operations per second (open loop, Poisson) before and after the trigger")
	flag.IntVar(&o.triggerRate, "trigger-rate", o.triggerRate, "operations per second during the trigger, a burst when above -rate (0: -rate)")
	flag.Uint64Var(&o.seed, "seed", o.seed, "seed of the arrivals, the same for every configuration")
	flag.IntVar(&o.clients, "clients", o.clients, "independent clients (each its own transports and retry state) splitting the traffic: operation i goes to client i mod N")
	flag.DurationVar(&o.deadline, "deadline", o.deadline, "operation deadline, the same for every configuration")
	flag.DurationVar(&o.attemptTimeout, "attempt-timeout", o.attemptTimeout, "attempt timeout, the same for every configuration")
	flag.DurationVar(&o.naiveBackoff, "naive-backoff", o.naiveBackoff, "naive: the constant pause between attempts")
	flag.IntVar(&o.workers, "workers", o.workers, "the server's workers: requests served at once")
	flag.IntVar(&o.triggerWorkers, "trigger-workers", o.triggerWorkers, "workers left during the trigger")
	flag.DurationVar(&o.service, "service", o.service, "service time of one request")
	flag.IntVar(&o.queue, "queue", o.queue, "the queue's bound: requests above it are refused at once (503)")
	flag.DurationVar(&o.before, "before", o.before, "steady load before the trigger")
	flag.DurationVar(&o.trigger, "trigger", o.trigger, "the trigger's length")
	flag.DurationVar(&o.after, "after", o.after, "the run after the trigger")
	flag.DurationVar(&o.window, "window", o.window, "recovery: sliding window over arrivals")
	flag.DurationVar(&o.step, "step", o.step, "recovery: the window's step (before, trigger, after, window and tail are multiples of it)")
	flag.Float64Var(&o.target, "target", o.target, "recovery: the share of the goodput before the trigger every later window must reach")
	flag.DurationVar(&o.bucket, "bucket", o.bucket, "the plot's resolution")
	flag.DurationVar(&o.tail, "tail", o.tail, "the table's last column: goodput over the run's last stretch this long")
	flag.StringVar(&o.plot, "plot", "", "write the plot of goodput over time (SVG) to this file")
	flag.DurationVar(&throttleWindow, "throttle-window", throttleWindow, "otelretry-throttle: the throttle's window")
	configs := flag.String("configs", strings.Join(o.configs, ","), "configurations to run, in order")
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
