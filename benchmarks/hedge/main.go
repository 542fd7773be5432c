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
	smoke := flag.Bool("smoke", false, "CI mode: a few hundred operations per configuration, two repetitions; checks that it runs, figures are meaningless")
	short := flag.Bool("short", false, "same as -smoke")
	flag.IntVar(&o.rate, "rate", o.rate, "operations per second (open loop, Poisson)")
	flag.Uint64Var(&o.seed, "seed", o.seed, "seed of the arrivals and service times (repetition r uses seed+r)")
	flag.IntVar(&o.reps, "reps", o.reps, "interleaved repetitions; the report gives their medians (with -sweep, 5 unless given: the fewest its target is judged on)")
	flag.DurationVar(&o.deadline, "deadline", o.deadline, "operation deadline, the same for every configuration")
	flag.IntVar(&o.maxInflight, "max-inflight", o.maxInflight, "operations in flight at most; arrivals above are dropped and counted")
	flag.IntVar(&o.warmup, "warmup", o.warmup, "operations of the warm-up phase (tail distribution, not judged)")
	flag.IntVar(&o.tail, "tail", o.tail, "operations of the tail phase (10,000 puts 10 samples above p99.9)")
	flag.IntVar(&o.brownout, "brownout", o.brownout, "operations of the brownout phase (every request stalled)")
	flag.DurationVar(&o.service.fastMin, "fast-min", o.service.fastMin, "service time: least fast answer")
	flag.DurationVar(&o.service.fastMean, "fast-mean", o.service.fastMean, "service time: mean of the exponential part of a fast answer")
	flag.Float64Var(&o.service.stallProb, "stall-prob", o.service.stallProb, "service time: probability that a request stalls (tail phase)")
	flag.Float64Var(&o.service.stallFactor, "stall-factor", o.service.stallFactor, "service time: a stalled request takes this many times a fast draw")
	flag.Float64Var(&o.budgetShare, "budget-share", o.budgetShare, "the share of extra load a bounded configuration may add (failsafe-go: its budget's max rate)")
	flag.StringVar(&o.jsonPath, "json", "", "also write the report as JSON to this file")
	flag.StringVar(&o.plotPath, "plot", "", "write the sweep's plot (SVG: p99.9 against extra requests) to this file")
	sweep := flag.Bool("sweep", false, "run the sweep (issue 44): failsafe-go and otelretry at several fixed delays, otelretry at several quantiles, unless -configs names them")
	configs := flag.String("configs", strings.Join(o.configs, ","), "configurations to run, in order ("+reference+" is always run: it is every ratio's reference); also any member of a swept family: failsafe-d<delay>, otelretry-d<delay>, otelretry-q<quantile>")
	judge := flag.String("judge", "", "judge the sweep of a report saved with -json again (its curves and the target on its repetitions), without running anything; with -plot, draw its plot")
	flag.Parse()
	if *judge != "" {
		r, err := judgeSaved(*judge, os.Stdout)
		if err == nil && o.plotPath != "" {
			err = os.WriteFile(o.plotPath, plotSVG(r), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	o.configs = strings.Split(*configs, ",")
	if *sweep && !flagSet("configs") {
		o.configs = sweepConfigs()
	}
	if *sweep && !flagSet("reps") {
		o.reps = minJudgedReps // the fewest the target is judged on
	}
	if *smoke || *short {
		o.smoke()
	}
	if _, err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// flagSet reports whether the flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
