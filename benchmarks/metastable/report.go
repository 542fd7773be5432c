// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/otelretry/otelretry-go/benchmarks/internal/benchrun"
)

// report is one configuration's figures.
type report struct {
	config string
	// Goodput, in operations per second: the operations that arrived in
	// the period and succeeded within their deadline, over its length.
	before, during, after, end float64
	// recovery is the time from the trigger's end until goodput is back
	// at target × its level before (see recovery), in seconds; +Inf when
	// it is not back by the end of the run.
	recovery float64
	// amplification is the requests the server received per operation
	// offered, over the whole run.
	amplification float64
	unsent        int // operations that sent no request (refused by the client itself)
	// The server's work, in seconds of service: all of it, and the part
	// spent on requests whose client had already gone.
	workS, abandonedS float64
	refused           int64 // requests refused at once, the queue full
	queuedAtEnd       int
	// goodput and offered, per bucket of o.bucket, in operations per
	// second: the plot's series.
	goodput, offered []float64
	warning          string
}

// counts are the operations that arrived in one stretch, and those of
// them that succeeded.
type counts struct{ ops, ok int }

// bucketCounts sums the records by arrival into buckets of width w over
// [0, total).
func bucketCounts(recs []opRecord, w, total time.Duration) []counts {
	n := int((total + w - 1) / w)
	c := make([]counts, n)
	for _, r := range recs {
		i := int(r.sched / w)
		if i < 0 || i >= n {
			continue
		}
		c[i].ops++
		if r.ok {
			c[i].ok++
		}
	}
	return c
}

// sum adds the buckets that hold [from, to), both multiples of the width.
func sum(c []counts, w, from, to time.Duration) counts {
	var s counts
	for i := int(from / w); i < int(to/w) && i < len(c); i++ {
		s.ops += c[i].ops
		s.ok += c[i].ok
	}
	return s
}

// recovery is the time, from the trigger's end, until goodput is back at
// target × its level before, for the load offered: the earliest offset t
// such that every window [u, u+window) of the after period with u ≥ t (u on
// a grid of step) has, of the operations that arrived in it, a success
// share of at least target × the share before the trigger. Judging the
// share rather than the count keeps the arrivals' own noise (±6 % in a
// second at 300 operations a second) from passing for a failure. 0 when
// no window fails; +Inf when the last window still fails, when no
// operation arrived from the recovery on (or the after period holds no
// window), or when nothing was served before the trigger (a bar of 0
// would pass every window).
//
// c holds the run in buckets of step, so that windows are sums of whole
// buckets.
func recovery(c []counts, step, afterStart, afterLen, window time.Duration, levelBefore, target float64) float64 {
	if levelBefore <= 0 {
		return math.Inf(1) // nothing served before the trigger: no level to come back to
	}
	// A share at the bar passes: 0.9 × 14/15 is 0.8400000000000001 in
	// floating point, and 252 of 300 at the bar must not read as below it.
	need := target * levelBefore * (1 - 1e-12)
	windows := 0
	if afterLen >= window {
		windows = int((afterLen-window)/step) + 1
	}
	from, recovered := benchrun.Recovery(windows, func(k int) (bool, bool) {
		u := afterStart + time.Duration(k)*step
		s := sum(c, step, u, u+window)
		return s.ops > 0, s.ops > 0 && share(s) < need
	})
	if !recovered {
		return math.Inf(1)
	}
	return (time.Duration(from) * step).Seconds()
}

func share(c counts) float64 {
	if c.ops == 0 {
		return 0
	}
	return float64(c.ok) / float64(c.ops)
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// analyze takes one configuration's run to its figures.
func analyze(o options, r result) report {
	trigStart, trigEnd, total := o.before, o.before+o.trigger, o.total()
	steps := bucketCounts(r.recs, o.step, total)
	period := func(from, to time.Duration) counts { return sum(steps, o.step, from, to) }
	before := period(0, trigStart)
	rep := report{
		config:      r.config,
		before:      perSecond(before.ok, trigStart),
		during:      perSecond(period(trigStart, trigEnd).ok, o.trigger),
		after:       perSecond(period(trigEnd, total).ok, o.after),
		end:         perSecond(period(total-o.tail, total).ok, o.tail),
		recovery:    recovery(steps, o.step, trigEnd, o.after, o.window, share(before), o.target),
		workS:       (time.Duration(r.served) * o.service).Seconds(),
		abandonedS:  (time.Duration(r.abandoned) * o.service).Seconds(),
		refused:     r.refused,
		queuedAtEnd: r.queuedAtEnd,
	}
	requests := 0
	for _, a := range r.attempts {
		requests += int(a)
		if a == 0 {
			rep.unsent++
		}
	}
	rep.amplification = math.NaN() // no operation offered: no figure
	if len(r.recs) > 0 {
		rep.amplification = float64(requests) / float64(len(r.recs))
	}
	for _, b := range bucketCounts(r.recs, o.bucket, total) {
		rep.goodput = append(rep.goodput, perSecond(b.ok, o.bucket))
		rep.offered = append(rep.offered, perSecond(b.ops, o.bucket))
	}
	if r.stray != 0 || r.unfinished != 0 || r.maxLag > maxLag {
		rep.warning = fmt.Sprintf("stray_requests=%d unfinished_ops=%d max_arrival_lag=%s (over %s: the machine was busy, figures distorted)",
			r.stray, r.unfinished, r.maxLag.Round(time.Millisecond), maxLag)
	}
	return rep
}

func (r report) recoveryText() string {
	if math.IsInf(r.recovery, 1) {
		return "none"
	}
	return fmt.Sprintf("%.1f s", r.recovery)
}

// line is the report's machine-readable line.
func (r report) line() string {
	rec := "none"
	if !math.IsInf(r.recovery, 1) {
		rec = fmt.Sprintf("%.1f", r.recovery)
	}
	return fmt.Sprintf("metastable config=%s goodput_before=%.1f goodput_during=%.1f goodput_after=%.1f goodput_end=%.1f recovery_s=%s amplification=%.3f abandoned_work_s=%.2f",
		r.config, r.before, r.during, r.after, r.end, rec, r.amplification, r.abandonedS)
}

// printTable writes the table: goodput in operations per second before,
// during and after the trigger and over the run's last seconds, the
// recovery, the amplification, the operations the client kept to itself,
// and the server's work spent for clients that had gone, in seconds and
// against no-retry's.
func printTable(w io.Writer, o options, reports []report) {
	base := math.NaN()
	for _, r := range reports {
		if r.config == "no-retry" {
			base = r.abandonedS
		}
	}
	fmt.Fprintf(w, "%-24s %8s %8s %8s %8s %9s %6s %7s %11s %9s %7s %8s %7s\n",
		"config", "before", "during", "after", fmt.Sprintf("last%s", fmtSeconds(o.tail)), "recovery", "amp", "unsent",
		"abandoned_s", "vs_noretry", "work_s", "refused", "queued")
	for _, r := range reports {
		vs := "-"
		if base > 0 {
			vs = fmt.Sprintf("%.2f", r.abandonedS/base)
		}
		fmt.Fprintf(w, "%-24s %8.1f %8.1f %8.1f %8.1f %9s %6.3f %7d %11.2f %9s %7.2f %8d %7d\n",
			r.config, r.before, r.during, r.after, r.end, r.recoveryText(), r.amplification, r.unsent,
			r.abandonedS, vs, r.workS, r.refused, r.queuedAtEnd)
		if r.warning != "" {
			fmt.Fprintf(w, "%-24s warning: %s\n", r.config, r.warning)
		}
	}
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}
