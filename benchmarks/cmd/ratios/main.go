// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command ratios reads raw `go test -bench` output of the overhead
// benchmarks (names like BenchmarkRoundTrip/case=bare-2) and prints, per
// benchmark, the median of each case and the ratios of otelretry-noop and
// otelretry-sdk to every other case, in ns/op and allocs/op, followed by the
// overhead targets, judged on the median of the per-run ratios (the runs
// are interleaved, see compare.sh; a run is the output of one go test,
// which begins with its goos: line (benchmark lines before any are
// refused), and the values one run gives a case,
// with -count, count as that run's median) and its 95 % bootstrap interval (ok,
// MISS, or EDGE when the runs cannot tell), the split of the SDK path's ratio
// into the content's price and otelretry's own work (the content floor
// case), and, from BenchmarkSDKParts (names like
// BenchmarkSDKParts/part=span-2), what the SDK path's required pieces cost
// against the 1.75x allowance (informational: it always exits 0 on readable
// input).
//
// Usage: go run ./cmd/ratios raw.txt [more.txt ...]   (or stdin)
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/otelretry/otelretry-go/benchmarks/internal/paired"
)

var ours = []string{"otelretry-noop", "otelretry-sdk"}

// samples[bench][case][unit] holds one value per run.
type samples map[string]map[string]map[string]*series

// series is one case's values of one unit, each with the run it came from
// (go test's output of each run begins with its goos: line): a run a case
// lacks (its sub-benchmark failed) pairs no value of another run with the
// other cases'.
type series struct {
	runs []int
	vals []float64
}

// byRun is the series with one value per run, in run order: the median of
// a run's values when it measured the case more than once (go test's
// -count inside one run). Ratios are paired over these: values of one run
// are no runs of their own.
func (sr *series) byRun() (runs []int, vals []float64) {
	for i := 0; i < len(sr.runs); {
		j := i
		for j < len(sr.runs) && sr.runs[j] == sr.runs[i] {
			j++
		}
		runs, vals = append(runs, sr.runs[i]), append(vals, paired.Median(sr.vals[i:j]))
		i = j
	}
	return runs, vals
}

// results are the runs read, with the benchmarks and each one's cases in
// the order they first appear.
type results struct {
	s     samples
	order []string
	cases map[string][]string
	run   int // the run being read, counted by goos: lines
}

// errNoRunHeader refuses benchmark lines that no goos: line begins: the
// runs could not be told apart, and every ratio would be judged on one.
var errNoRunHeader = errors.New("a benchmark line before any goos: line: give go test's own output, in which each run begins with goos: (benchmark lines alone cannot be told apart by run)")

// read adds the benchmark lines of r, which go test's goos: line begins.
func (res *results) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	header := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "goos:") {
			res.run++
			header = true
			continue
		}
		bench, cs, vals, ok := parse(sc.Text())
		if !ok {
			continue
		}
		if !header {
			return errNoRunHeader
		}
		if res.s[bench] == nil {
			res.s[bench] = map[string]map[string]*series{}
			res.order = append(res.order, bench)
		}
		if res.s[bench][cs] == nil {
			res.s[bench][cs] = map[string]*series{}
			res.cases[bench] = append(res.cases[bench], cs)
		}
		for unit, v := range vals {
			sr := res.s[bench][cs][unit]
			if sr == nil {
				sr = &series{}
				res.s[bench][cs][unit] = sr
			}
			sr.runs, sr.vals = append(sr.runs, res.run), append(sr.vals, v)
		}
	}
	return sc.Err()
}

// readFile adds the benchmark lines of the file at name.
func (res *results) readFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := res.read(f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// med is the median over runs of a case's unit, each run counted once
// (byRun): a run that measured the case with -count does not outvote the
// others.
func (res *results) med(bench, cs, unit string) (float64, bool) {
	v := res.s[bench][cs][unit]
	if v == nil || len(v.vals) == 0 {
		return 0, false
	}
	_, perRun := v.byRun()
	return paired.Median(perRun), true
}

// perRun is the median over runs of a's value over b's in the same run:
// compare.sh interleaves the cases, so run i of every case saw the same
// spell of the machine, and a slow spell cancels out of each ratio
// instead of landing on one case's median. ok is false unless both
// cases have values in the same runs.
func (res *results) perRun(bench, a, b, unit string) (float64, bool) {
	return paired.Ratio(res.pair(bench, a, bench, b, unit))
}

// interval is perRun's 95 % bootstrap interval (paired.Interval).
func (res *results) interval(bench, a, b, unit string) (lo, hi float64, ok bool) {
	return paired.Interval(res.pair(bench, a, bench, b, unit))
}

// pair returns the values of case a of bench ba and of case b of bench bb,
// run by run, or none when they were not measured in the same runs.
func (res *results) pair(ba, a, bb, b, unit string) (x, y []float64) {
	sa, sb := res.s[ba][a][unit], res.s[bb][b][unit]
	if sa == nil || sb == nil {
		return nil, nil
	}
	ra, x := sa.byRun()
	rb, y := sb.byRun()
	if !slices.Equal(ra, rb) {
		return nil, nil
	}
	return x, y
}

func main() {
	res := &results{s: samples{}, cases: map[string][]string{}}
	if len(os.Args) < 2 {
		if err := res.read(os.Stdin); err != nil {
			fail(err)
		}
	}
	for _, name := range os.Args[1:] {
		if err := res.readFile(name); err != nil {
			fail(err)
		}
	}
	if len(res.order) == 0 {
		fail(fmt.Errorf("no benchmark results of the form Benchmark<Name>/case=<case>"))
	}
	printCases(res)
	printTargets(res)
	linearity(res)
	contentFloor(res)
	sdkSplit(res)
	logEvents(res)
}

// printCases prints each benchmark's cases' medians and our cases' ratios
// to each peer.
func printCases(res *results) {
	for _, bench := range res.order {
		if res.s[bench]["bare"] == nil {
			continue // parts, not cases (see sdkSplit)
		}
		n := runs(res.s[bench])
		fmt.Printf("\n## %s (medians of %d runs)\n\n", bench, n)
		fmt.Printf("%-31s %12s %10s %10s %9s\n", "case", "ns/op", "B/op", "allocs/op", "spans/op")
		for _, cs := range res.cases[bench] {
			label := cs
			if k := caseRuns(res.s[bench][cs]); k < n {
				label = fmt.Sprintf("%s (%d of %d runs)", cs, k, n) // its median is of fewer runs
			}
			fmt.Printf("%-31s %12s %10s %10s %9s\n", label,
				num(res.med(bench, cs, "ns/op")), num(res.med(bench, cs, "B/op")),
				num(res.med(bench, cs, "allocs/op")), num(res.med(bench, cs, "spans/op")))
		}
		fmt.Printf("\nratios (ours / peer)               %14s %14s %14s %14s\n", "noop ns", "noop allocs", "sdk ns", "sdk allocs")
		for _, peer := range res.cases[bench] {
			if slices.Contains(ours, peer) {
				continue
			}
			fmt.Printf("%-34s", "vs "+peer)
			for _, o := range ours {
				for _, unit := range []string{"ns/op", "allocs/op"} {
					a, okA := res.med(bench, o, unit)
					p, okP := res.med(bench, peer, unit)
					if !okA || !okP || p == 0 || (peer == floorCase && o != "otelretry-sdk") {
						fmt.Printf(" %14s", "-")
						continue
					}
					fmt.Printf(" %13.2fx", a/p)
				}
			}
			fmt.Println()
		}
	}
}

// printTargets prints the overhead targets (issue 44's): the SDK path
// against the content floor, the no-op path against go-retryablehttp on
// loopback and against go-retryablehttp given the same bounds in memory. A
// ratio target is judged on the paired ratio (see perRun) and its 95 %
// bootstrap interval: ok when the whole interval meets the bound, MISS when
// none of it does, EDGE when the runs cannot tell. The ratio of the medians
// is printed beside it.
func printTargets(res *results) {
	fmt.Printf("\n## targets (paired: median of the per-run ratios, with its 95%% interval; medians: ratio of the medians)\n\n")
	// The SDK path is judged on what the library controls: its price over
	// the content floor, which writes the same telemetry by hand (issue 25
	// restated the targets at 1.10x, aiming for 1.05x; issue 44 made the
	// aim the target). The floor's own ratio to the peer is reported below
	// (contentFloor), not targeted.
	res.target("loopback: sdk ns/op <= 1.05x the content floor", "RoundTripLoopback", "otelretry-sdk", "ns/op", paired.AtMost(1.05), floorCase)
	res.target("in memory: sdk ns/op <= 1.05x the content floor", "RoundTrip", "otelretry-sdk", "ns/op", paired.AtMost(1.05), floorCase)
	res.target("loopback: noop ns/op <= 1.05x retryablehttp", "RoundTripLoopback", "otelretry-noop", "ns/op", paired.AtMost(1.05), "retryablehttp")
	res.target("in memory: noop ns/op <= 0.8x retryablehttp-deadline", "RoundTrip", "otelretry-noop", "ns/op", paired.AtMost(0.8), "retryablehttp-deadline")
	res.target("in memory: noop allocs/op < retryablehttp-deadline", "RoundTrip", "otelretry-noop", "allocs/op", paired.Below(1), "retryablehttp-deadline")
}

// target prints one target's line: case a's unit against other's under
// bound b.
func (res *results) target(label string, bench, a, unit string, b paired.Bound, other string) {
	x, okX := res.med(bench, a, unit)
	y, okY := res.med(bench, other, unit)
	if !okX || !okY {
		return
	}
	r, okR := res.perRun(bench, a, other, unit)
	lo, hi, okI := res.interval(bench, a, other, unit)
	if !okR || !okI {
		// Unpaired runs (a run cut short), or too few: nothing to judge
		// on, which is not a point interval at the medians' ratio.
		fmt.Printf("%-4s %-62s %s=%s %s=%s (no paired interval: runs unpaired, fewer than %d, or one without a ratio (a value that is no finite number at or above 0, or a peer's 0); medians %.2fx)\n",
			"EDGE", label, a, num(x, true), other, num(y, true), paired.MinRuns, x/y)
		return
	}
	fmt.Printf("%-4s %-62s %s=%s %s=%s (paired %.2fx [%.2f-%.2f], medians %.2fx)\n",
		b.Verdict(lo, hi), label, a, num(x, true), other, num(y, true), r, lo, hi, x/y)
}

// linearity prints the linearity target of each of our cases: each extra
// attempt should cost no more than the first (Retry3 <= 3x RoundTrip).
// Retry3 and RoundTrip of a case run in the same runs: it is judged as
// the other targets are, on the per-run ratios and their interval.
func linearity(res *results) {
	med := res.med
	for _, o := range ours {
		one, ok1 := med("RoundTrip", o, "ns/op")
		three, ok3 := med("Retry3", o, "ns/op")
		a1, _ := med("RoundTrip", o, "allocs/op")
		a3, _ := med("Retry3", o, "allocs/op")
		if !ok1 || !ok3 {
			continue
		}
		label := "Retry3 " + o + " ns/op <= 3x RoundTrip"
		x, y := res.pair("Retry3", o, "RoundTrip", o, "ns/op")
		r, okR := paired.Ratio(x, y)
		lo, hi, okI := paired.Interval(x, y)
		allocs := fmt.Sprintf("%.1f allocs per extra attempt vs %.0f for the first operation", (a3-a1)/2, a1)
		if !okR || !okI {
			fmt.Printf("%-4s %-58s Retry3=%s (no paired interval: runs unpaired, fewer than %d, or one without a ratio (a value that is no finite number at or above 0, or a peer's 0); medians %.2fx RoundTrip), %s\n",
				"EDGE", label, num(three, true), paired.MinRuns, three/one, allocs)
			continue
		}
		fmt.Printf("%-4s %-58s Retry3=%s (paired %.2fx [%.2f-%.2f] RoundTrip, medians %.2fx), %s\n",
			paired.AtMost(3).Verdict(lo, hi), label, num(three, true), r, lo, hi, three/one, allocs)
	}
}

// logEvents prints, from BenchmarkLogEvents (names like
// BenchmarkLogEvents/kind=success/case=sdk-events-2), the log events'
// price: the transport with them against the baseline, the same transport
// without them emitting the same records straight through the SDK
// (target: within 10 %, judged on the median of the per-run ratios).
func logEvents(res *results) {
	perRun, interval, med := res.perRun, res.interval, res.med
	for _, bench := range res.order {
		if !strings.HasPrefix(bench, "LogEvents/") {
			continue
		}
		for _, t := range []string{"sdk", "noop"} {
			ev, dir := t+"-events", t+"-direct"
			r, ok := perRun(bench, ev, dir, "ns/op")
			if !ok {
				continue
			}
			e, _ := med(bench, ev, "ns/op")
			d, _ := med(bench, dir, "ns/op")
			ea, _ := med(bench, ev, "allocs/op")
			da, _ := med(bench, dir, "allocs/op")
			// Judged as the other targets: on the interval, EDGE when the
			// runs cannot tell (or are too few to).
			lo, hi, ok := interval(bench, ev, dir, "ns/op")
			verdict := "EDGE"
			if ok {
				verdict = paired.AtMost(1.10).Verdict(lo, hi)
			}
			shown := intervalText(lo, hi, ok)
			fmt.Printf("%-4s %-58s %.2fx per run %s (medians %s vs %s ns, %.0f vs %.0f allocs)\n",
				verdict, strings.TrimPrefix(bench, "LogEvents/")+" "+ev+" <= 1.10x "+dir, r, shown, num(e, true), num(d, true), ea, da)
		}
	}
}

// floorCase is the content floor: retryablehttp-otelhttp writing by hand
// the span attributes and metric records otelretry-sdk writes (see
// overhead/floor_test.go).
const floorCase = "retryablehttp-otelhttp-content"

// contentFloor splits the SDK path's ratio to retryablehttp-otelhttp into
// the price of the content the span and metric contracts require (the
// floor over the peer) and the price of otelretry's own work (otelretry-sdk
// over the floor, which the targets judge).
func contentFloor(res *results) {
	perRun, interval, med := res.perRun, res.interval, res.med
	fmt.Printf("\n## the content floor (%s; paired ratios with their 95%% intervals, ratios of the medians in brackets)\n\n", floorCase)
	for _, bench := range []string{"RoundTrip", "RoundTripLoopback"} {
		content, okC := perRun(bench, floorCase, "retryablehttp-otelhttp", "ns/op")
		own, okO := perRun(bench, "otelretry-sdk", floorCase, "ns/op")
		total, okT := perRun(bench, "otelretry-sdk", "retryablehttp-otelhttp", "ns/op")
		peer, _ := med(bench, "retryablehttp-otelhttp", "ns/op")
		floor, _ := med(bench, floorCase, "ns/op")
		sdk, _ := med(bench, "otelretry-sdk", "ns/op")
		if !okC || !okO || !okT || peer == 0 || floor == 0 {
			continue
		}
		fb, _ := med(bench, floorCase, "B/op")
		ob, _ := med(bench, "otelretry-sdk", "B/op")
		pb, _ := med(bench, "retryablehttp-otelhttp", "B/op")
		fmt.Printf("%-18s sdk/peer %.2fx (%.2fx): content (floor/peer) %.2fx %s (%.2fx), own work (sdk/floor) %.2fx %s (%.2fx); B/op peer %s, floor %s, sdk %s\n",
			bench, total, sdk/peer, content, intervalText(interval(bench, floorCase, "retryablehttp-otelhttp", "ns/op")),
			floor/peer, own, intervalText(interval(bench, "otelretry-sdk", floorCase, "ns/op")),
			sdk/floor, num(pb, true), num(fb, true), num(ob, true))
	}
}

// intervalText is an interval as the report prints it, or why there is
// none (unpaired runs, or fewer than paired.MinRuns).
func intervalText(lo, hi float64, ok bool) string {
	if !ok {
		return "[no interval]"
	}
	return fmt.Sprintf("[%.2f-%.2f]", lo, hi)
}

// partsBench holds the prices of the SDK path's pieces, by part.
const partsBench = "SDKParts"

// sdkSplit prices what the span and metric contracts require of the SDK
// path beyond retryablehttp-otelhttp (the attempt event written on the
// CLIENT span, the operation span's attributes, two counter adds and three
// histogram records) and sets it against what 1.75x
// retryablehttp-otelhttp allows in memory: where the time goes, per span
// and per metric record.
func sdkSplit(res *results) {
	med := res.med
	part := func(name string) float64 { v, _ := med(partsBench, name, "ns/op"); return v }
	span, ok := med(partsBench, "span", "ns/op")
	peer, okP := med("RoundTrip", "retryablehttp-otelhttp", "ns/op")
	ours, okO := med("RoundTrip", "otelretry-sdk", "ns/op")
	if !ok || !okP || !okO {
		return
	}
	rows := []struct {
		what string
		ns   float64
	}{
		{"attempt event on the CLIENT span (span with it - bare span)", part("span+attempt-attributes") - span},
		{"operation span attributes (span with them - bare span)", part("span+operation-attributes") - span},
		{"2 counter adds (retry.operations, retry.attempts)", 2 * part("counter")},
		{"3 histogram records (operation attempts and duration, attempt duration)", 3 * part("histogram")},
	}
	fmt.Printf("\n## SDK path: required pieces vs the 1.75x allowance (RoundTrip, ns/op)\n\n")
	required := 0.0
	for _, r := range rows {
		fmt.Printf("%-76s %8.0f\n", r.what, r.ns)
		required += r.ns
	}
	fmt.Printf("%-76s %8.0f\n", "required by the span and metric contracts", required)
	fmt.Printf("%-76s %8.0f\n", "allowed over retryablehttp-otelhttp by 1.75x ("+num(peer, true)+" ns)", 0.75*peer)
	fmt.Printf("%-76s %8.0f\n", "measured over retryablehttp-otelhttp (otelretry-sdk "+num(ours, true)+" ns)", ours-peer)
}

// parse splits "BenchmarkRoundTrip/case=bare-2  N  v unit  v unit ...".
func parse(line string) (bench, cs string, vals map[string]float64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return "", "", nil, false
	}
	name := strings.TrimPrefix(f[0], "Benchmark")
	bench, rest, found := strings.Cut(name, "/case=")
	if !found {
		if bench, rest, found = strings.Cut(name, "/part="); !found {
			return "", "", nil, false
		}
	}
	cs = rest
	if i := strings.LastIndexByte(cs, '-'); i >= 0 {
		if _, err := strconv.Atoi(cs[i+1:]); err == nil {
			cs = cs[:i] // GOMAXPROCS suffix
		}
	}
	vals = map[string]float64{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", "", nil, false
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue // no measurement (a metric of 0/0): the run lacks this unit
		}
		vals[f[i+1]] = v
	}
	return bench, cs, vals, true
}

// runs is the most runs any case of a benchmark was measured in (in any
// unit), the table's header; caseRuns is one case's: the fewest runs of
// the units it was measured in, so that a row whose median in one column
// is of fewer runs (a NaN left out) says so.
func runs(cases map[string]map[string]*series) int {
	n := 0
	for _, units := range cases {
		for _, v := range units {
			r, _ := v.byRun()
			n = max(n, len(r))
		}
	}
	return n
}

func caseRuns(units map[string]*series) int {
	k := -1
	for _, v := range units {
		if r, _ := v.byRun(); k < 0 || len(r) < k {
			k = len(r)
		}
	}
	return max(k, 0)
}

func num(v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ratios:", err)
	os.Exit(1)
}
