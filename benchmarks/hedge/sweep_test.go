// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"slices"
	"testing"
	"time"
)

// A swept member is named by its family and its parameter; a name that
// parses as neither a fixed configuration nor a member is refused.
func TestMembersAreNamedByTheirParameter(t *testing.T) {
	for _, c := range []struct {
		name   string
		family string
		param  float64
	}{
		{"failsafe-d5.5ms", "failsafe-d", float64(5500 * time.Microsecond)},
		{"otelretry-d8ms", "otelretry-d", float64(8 * time.Millisecond)},
		{"otelretry-q0.95", "otelretry-q", 0.95},
		{"failsafe-budget-d6ms", "failsafe-budget-d", float64(6 * time.Millisecond)},
		{"otelretry-rate1-nobudget-d5ms", "otelretry-rate1-nobudget-d", float64(5 * time.Millisecond)},
	} {
		f, p, ok := familyOf(c.name)
		if !ok || f.prefix != c.family || p != c.param {
			t.Errorf("%s: family %q, parameter %v (%v); want %q, %v", c.name, f.prefix, p, ok, c.family, c.param)
		}
		if cfg, ok := lookupConfig(c.name); !ok || cfg.name != c.name || cfg.transport == nil {
			t.Errorf("%s: not a configuration", c.name)
		}
	}
	for _, bad := range []string{"failsafe-dsoon", "otelretry-q1", "otelretry-q0", "otelretry-d-1ms", "failsafe-d"} {
		if _, ok := lookupConfig(bad); ok {
			t.Errorf("%s: accepted", bad)
		}
	}
	o := defaultOptions()
	o.configs = sweepConfigs()
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	if o.configs[0] != reference || len(o.configs) != 1+2*len(sweepDelays)+len(sweepBudgetDelays)+len(sweepQuantiles) {
		t.Errorf("sweep configurations %v", o.configs)
	}
}

// A member that hedges after a fixed delay gets a rate of three times the
// share of service times longer than the delay less the client's time (at
// most 1): at least the share of operations the delay passes. An adaptive
// member gets twice 1 - quantile; failsafe-go without its budget none.
func TestSweepRatesAreAtLeastTheShareTheDelayPasses(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	f, _, _ := familyOf("otelretry-d5ms")
	for _, d := range sweepDelays {
		p, _ := parseDelay(d)
		share := 1 - e.service.cdf(time.Duration(p)-clientTime)
		if r := f.rate(p, e); r < min(1, 3*share)-1e-12 || r > 1 {
			t.Errorf("%s: MaxShare %v for a share of %v", d, r, share)
		}
	}
	// failsafe-go at 7 ms sent 4 % extra requests: the rate is above.
	if r := f.rate(float64(7*time.Millisecond), e); r < 0.06 {
		t.Errorf("7ms: MaxShare %v, want above the 4 %% failsafe-go sent", r)
	}
	q, _, _ := familyOf("otelretry-q0.95")
	if r := q.rate(0.95, e); math.Abs(r-0.1) > 1e-12 {
		t.Errorf("quantile 0.95: MaxShare %v, want 0.1", r)
	}
	if r := q.rate(0.2, e); r != 1 {
		t.Errorf("quantile 0.2: MaxShare %v, want 1", r)
	}
	b, _, _ := familyOf("failsafe-budget-d5ms")
	if fs, _, _ := familyOf("failsafe-d5ms"); !math.IsNaN(fs.rate(5e6, e)) || b.rate(5e6, e) != f.rate(5e6, e) {
		t.Error("failsafe-go has no rate without its budget, and its budget the rate otelretry gets at the same delay")
	}
}

func pts(xy ...float64) []point {
	var ps []point
	for i := 0; i < len(xy); i += 2 {
		ps = append(ps, point{Extra: num(xy[i]), P999Ms: num(xy[i+1])})
	}
	return ps
}

// The p99.9 at an extra load is interpolated linearly between the two
// points around it, and not known outside the curve's range.
func TestInterpolateBetweenSweepPoints(t *testing.T) {
	c := curve{Points: pts(0.01, 12, 0.03, 10, 0.10, 9)}
	for _, tc := range []struct {
		x    float64
		want float64
		ok   bool
	}{{0.01, 12, true}, {0.02, 11, true}, {0.03, 10, true}, {0.065, 9.5, true}, {0.10, 9, true}, {0.005, 0, false}, {0.2, 0, false}} {
		got, ok := c.interpolate(tc.x)
		if ok != tc.ok || (ok && math.Abs(got-tc.want) > 1e-9) {
			t.Errorf("at %v: %v, %v; want %v, %v", tc.x, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := (curve{Points: pts(0.05, 7)}).interpolate(0.05); !ok || got != 7 {
		t.Errorf("a single point: %v, %v", got, ok)
	}
	if _, ok := (curve{}).interpolate(0.05); ok {
		t.Error("no points: want nothing")
	}
}

// Each otelretry family is compared with each of failsafe-go's at every
// whole percent from 1 to 10, every tenth above, and at its own points,
// where both curves reach, phase by phase.
func TestCompareAtEqualLoad(t *testing.T) {
	cs := []curve{
		{Family: "failsafe-d", Phase: "tail", Points: pts(0.01, 12, 0.05, 10, 0.12, 8)},
		{Family: "otelretry-q", Phase: "tail", Points: pts(0.025, 10, 0.045, 9)},
		{Family: "failsafe-d", Phase: "brownout", Points: pts(1, 500)},
		{Family: "failsafe-budget-d", Phase: "brownout", Points: pts(0.05, 880, 0.25, 800)},
		{Family: "otelretry-q", Phase: "brownout", Points: pts(0.05, 880, 0.35, 850)},
	}
	got := compareAtEqualLoad(cs)
	var tail, brownout []float64
	for _, e := range got {
		switch {
		case e.Phase == "tail" && e.Family == "otelretry-q" && e.Peer == "failsafe-d":
			tail = append(tail, float64(e.Extra))
		case e.Phase == "brownout" && e.Family == "otelretry-q" && e.Peer == "failsafe-budget-d":
			brownout = append(brownout, float64(e.Extra))
		default:
			t.Errorf("compared %s/%s with %s: no common range", e.Phase, e.Family, e.Peer)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if want := []float64{0.025, 0.03, 0.04, 0.045}; !slices.EqualFunc(tail, want, near) {
		t.Errorf("tail compared at %v, want %v", tail, want)
	}
	if want := []float64{0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.2}; !slices.EqualFunc(brownout, want, near) {
		t.Errorf("brownout compared at %v, want %v", brownout, want)
	}
	// At 3 %: failsafe-go 11 ms, own 9.75 ms.
	if e := got[1]; math.Abs(float64(e.PeerMs)-11) > 1e-9 || math.Abs(float64(e.OwnMs)-9.75) > 1e-9 || math.Abs(float64(e.Ratio)-9.75/11) > 1e-9 {
		t.Errorf("at 3 %%: %+v", e)
	}
}
