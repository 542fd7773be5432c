// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bufio"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The HTML report is one self-contained file: inline CSS and SVG, no
// script, no font, image or style sheet from anywhere, and a Content
// Security Policy that forbids loading any. Every value from the input is
// first escaped as the text report escapes it (control, bidirectional and
// invalid bytes as Go escapes; URLs were sanitized by the inspector), then
// by html/template for its context: the HTML report shows ids and URLs
// exactly as the text report prints them, and never as markup.

//go:embed html.tmpl
var htmlTemplate string

var htmlPage = template.Must(template.New("report").Parse(htmlTemplate))

// Defaults of HTMLOptions.
const (
	// DefaultHTMLOperations is how many operations get a timeline.
	DefaultHTMLOperations = 200
	// DefaultHTMLFindings is how many findings are listed one by one.
	DefaultHTMLFindings = 500
)

// HTMLOptions tune the HTML report. The zero value is ready to use.
type HTMLOptions struct {
	// Source says where the spans came from (a file name, a Jaeger query);
	// it is shown escaped.
	Source string
	// MaxOperations bounds the timelines drawn (DefaultHTMLOperations when
	// 0): one per group of identical operations. With more groups, the
	// first in order of severity are drawn; the page says what it left
	// out.
	MaxOperations int
	// MaxFindings bounds the findings listed one by one
	// (DefaultHTMLFindings when 0); all are counted by code.
	MaxFindings int
}

// HTML writes r as one self-contained HTML page for a browser: first a
// headline per dependency, then the figures, a legend, an overview of all
// operations on one time axis grouped by dependency with a strip
// of the retry ratio and the budget's refusals over time, the findings
// and notes in the text report's words, each linked to the operations it
// names, a timeline per group of identical operations, on its own time
// axis, by severity, and the distributions of the summary.
func HTML(w io.Writer, r *inspect.Report, o HTMLOptions) error {
	if o.MaxOperations <= 0 {
		o.MaxOperations = DefaultHTMLOperations
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultHTMLFindings
	}
	page := buildPage(r, o)
	bw := bufio.NewWriter(w)
	if err := htmlPage.Execute(bw, page); err != nil {
		return err
	}
	return bw.Flush()
}

// page is what the template renders. Every string in it is already
// escaped for the terminal (esc); html/template escapes it for HTML.
type page struct {
	Source    string
	Counts    string
	Headlines []headline
	Cards     []card
	Overview  overview
	Strip     strip
	Charts    []chart
	Legend    []legendItem
	Hedges    bool // attempts overlap: the legend explains the hedges' drawings

	Findings        []findingView
	FindingsByCode  []codeCount
	FindingsLeftOut int
	Notes           []findingView

	Ops        []timeline
	OpsNote    string   // how the operations are grouped and ordered
	OpsLeftOut []string // what the left-out operations were
}

type card struct {
	Value, Label, Detail string
	Alert                bool
}

// legendItem is one colour: a decision, or an outcome (the terminal
// decision of the same name), or any other value.
type legendItem struct{ Class, Value, Label string }

type codeCount struct {
	Code  string
	Count int
}

type findingView struct {
	Anchor string // id of the list item
	Code   string
	Where  string
	Seen   string
	Check  string
	Ops    []opLink
}

type opLink struct {
	ID     string
	Anchor string // "" when the operation is not drawn
}

// esc writes a value from the input as the text report does.
func esc(s string) string { return Escape(s) }

func buildPage(r *inspect.Report, o HTMLOptions) *page {
	p := &page{Source: esc(o.Source), Counts: esc(countsLine(r))}

	// The findings of each operation, for the badges on its timeline.
	findingsOf := map[int][]findingRef{}
	byCode := map[inspect.Code]int{}
	for i, f := range r.Findings {
		byCode[f.Code]++
		ref := findingRef{Code: string(f.Code)}
		if i < o.MaxFindings {
			ref.Anchor = "finding-" + strconv.Itoa(i)
		}
		for _, opIdx := range f.Operations() {
			findingsOf[opIdx] = append(findingsOf[opIdx], ref)
		}
	}
	groups := groupOperations(r, findingsOf)
	drawn := groups[:min(len(groups), o.MaxOperations)]
	anchorOf := map[int]string{}
	for _, g := range drawn {
		for k, i := range g.members {
			anchorOf[i] = g.anchor // the card, for those it does not list
			if k < maxListedMembers {
				anchorOf[i] = memberAnchor(i)
			}
		}
	}

	for i, f := range r.Findings {
		if i < o.MaxFindings {
			p.Findings = append(p.Findings, viewFinding(r, f, "finding-"+strconv.Itoa(i), anchorOf))
		}
	}
	p.FindingsLeftOut = max(0, len(r.Findings)-o.MaxFindings)
	for _, c := range inspect.Codes() {
		if n := byCode[c]; n > 0 {
			p.FindingsByCode = append(p.FindingsByCode, codeCount{string(c), n})
		}
	}
	for i, n := range r.Notes {
		p.Notes = append(p.Notes, viewFinding(r, n, "note-"+strconv.Itoa(i), anchorOf))
	}

	s := &r.Summary
	p.Cards = []card{
		{Value: strconv.Itoa(s.Operations), Label: "operations"},
		{Value: strconv.Itoa(s.Attempts), Label: "attempts"},
		{Value: fmt.Sprintf("%.3f", s.RetryRatio.Value), Label: "retry ratio",
			Detail: fmt.Sprintf("%d of %s", s.RetryRatio.Count, plural(s.RetryRatio.Total, "attempt"))},
		{Value: fmt.Sprintf("%.3f", s.DeadlineRatio.Value), Label: "deadline ratio",
			Detail: fmt.Sprintf("%d of %s", s.DeadlineRatio.Count, plural(s.DeadlineRatio.Total, "operation"))},
		{Value: strconv.Itoa(len(r.Findings)), Label: "findings", Alert: len(r.Findings) > 0},
		{Value: strconv.Itoa(len(r.Notes)), Label: "notes"},
	}
	deps := dependencies(r)
	p.Headlines = headlines(r)
	p.Hedges = slices.ContainsFunc(r.Operations, func(op inspect.Operation) bool {
		return slices.ContainsFunc(op.Attempts, func(at inspect.Attempt) bool { return at.IsHedge() })
	})
	p.Overview, p.Strip = buildOverview(r, deps, anchorOf)
	p.Charts = buildCharts(s)
	p.Legend = legend()

	for _, g := range drawn {
		p.Ops = append(p.Ops, buildGroupTimeline(r, g, findingsOf[g.members[0]]))
	}
	n := len(r.Operations)
	order := "those with findings first, then those that did not return, then the rest, each in time order"
	switch {
	case n == 0:
		p.OpsNote = "no operations: no span carries the retry attributes"
	case len(drawn) == len(groups):
		p.OpsNote = fmt.Sprintf("%s in %s: identical operations (same method, route, outcome and findings, the same decisions, results and hedges attempt by attempt) share one; %s",
			plural(n, "operation"), plural(len(groups), "timeline"), order)
	default:
		p.OpsNote = fmt.Sprintf("%s in %s, of which the first %d are drawn: identical operations share one; %s",
			plural(n, "operation"), plural(len(groups), "timeline"), len(drawn), order)
		p.OpsLeftOut = leftOut(r, groups[len(drawn):], findingsOf)
	}
	return p
}

func viewFinding(r *inspect.Report, f inspect.Finding, anchor string, anchorOf map[int]string) findingView {
	v := findingView{Anchor: anchor, Code: esc(string(f.Code)), Where: esc(findingWhere(f)), Seen: esc(f.Seen), Check: esc(f.Check)}
	for _, i := range f.Operations() {
		if i < 0 || i >= len(r.Operations) {
			continue
		}
		v.Ops = append(v.Ops, opLink{ID: esc(orNone(r.Operations[i].ID)), Anchor: anchorOf[i]})
	}
	return v
}

// Severity of an operation, for the order of the timelines.
const (
	severityFinding = "finding" // it has a finding
	severityOutcome = "outcome" // it ended otherwise than return
	severityReturn  = "return"
)

func severityRank(s string) int {
	return map[string]int{severityFinding: 0, severityOutcome: 1, severityReturn: 2}[s]
}

// group is a set of identical operations, drawn as one timeline: the
// first one's.
type group struct {
	members  []int // positions in the report, in time order
	severity string
	anchor   string
}

// maxListedMembers bounds the operations a group's card lists by id; the
// others link to the card itself.
const maxListedMembers = 100

func memberAnchor(i int) string { return "op-" + strconv.Itoa(i) }

// groupOperations puts identical operations together: the same method,
// route (the URL without its query), outcome and findings, and the same
// decision, result and hedge attempt by attempt (state checks included).
// Groups come by severity (findings, outcomes other than return, the
// rest), then by the start of their first operation.
func groupOperations(r *inspect.Report, findingsOf map[int][]findingRef) []*group {
	byKey := map[string]*group{}
	var groups []*group
	for i := range r.Operations {
		op := &r.Operations[i]
		key := identity(op, findingsOf[i])
		g := byKey[key]
		if g == nil {
			g = &group{anchor: memberAnchor(i), severity: severityReturn}
			switch {
			case len(findingsOf[i]) > 0:
				g.severity = severityFinding
			case op.Outcome != string(attrs.OutcomeReturn):
				g.severity = severityOutcome
			}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	start := func(g *group) time.Time { return r.Operations[g.members[0]].Start }
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(severityRank(a.severity), severityRank(b.severity)), start(a).Compare(start(b)))
	})
	return groups
}

// identity is what identical operations share.
func identity(op *inspect.Operation, findings []findingRef) string {
	route, _, _ := strings.Cut(op.URL, "?")
	route, _, _ = strings.Cut(route, "#")
	parts := []string{op.Method, route, op.Outcome}
	for _, f := range findings {
		parts = append(parts, "finding "+f.Code)
	}
	for _, step := range steps(op) {
		parts = append(parts, step)
	}
	// Each part quoted: a value may hold any byte, a separator's too, and
	// two operations that differ must not join into one key.
	var key strings.Builder
	for _, p := range parts {
		key.WriteString(strconv.Quote(p))
	}
	return key.String()
}

// steps lists an operation's attempts and state checks in order, each as
// its decision, result and part in hedging.
func steps(op *inspect.Operation) []string {
	var out []string
	checks := op.StateChecks
	for _, at := range op.Attempts {
		for len(checks) > 0 && !checks[0].Start.After(at.Start) {
			out = append(out, "state_check "+checks[0].Result)
			checks = checks[1:]
		}
		step := at.Decision + " " + result(at)
		if of := hedged(&at); of != nil {
			step += " hedge of " + number(*of) // not when it was sent, which varies
		}
		out = append(out, step)
	}
	for _, c := range checks {
		out = append(out, "state_check "+c.Result)
	}
	return out
}

// leftOut describes the operations of the groups not drawn: how many,
// their outcomes and attempt counts, and how many of them have findings.
func leftOut(r *inspect.Report, groups []*group, findingsOf map[int][]findingRef) []string {
	var rest []inspect.Operation
	withFindings := 0
	for _, g := range groups {
		for _, i := range g.members {
			rest = append(rest, r.Operations[i])
			if len(findingsOf[i]) > 0 {
				withFindings++
			}
		}
	}
	// The summary of the left-out operations, as the report summarizes
	// all of them.
	s := inspect.Summarize(rest)
	lines := []string{
		fmt.Sprintf("left out: %s with %s, in %s", plural(len(rest), "operation"), plural(s.Attempts, "attempt"), plural(len(groups), "timeline")),
		"outcomes: " + shares(s.Outcomes),
		"attempts per operation: " + shares(s.AttemptsPerOperation),
	}
	if withFindings > 0 {
		lines = append(lines, fmt.Sprintf("%d of them with findings (listed under Findings)", withFindings))
	} else {
		lines = append(lines, "none of them has a finding")
	}
	for i := range lines {
		lines[i] = esc(lines[i])
	}
	return lines
}

// The colours: one per decision, and per outcome, which is the terminal
// decision of the same name, so that an operation's outcome has the
// colour of its last attempt's decision. The template's CSS defines each
// class; every other value (outside the vocabulary, or none) is "other".
const classOther = "v-other"

// valueClass is the colour class of a decision or an outcome.
func valueClass(v string) string {
	if attrs.Decision(v).Valid() {
		return "v-" + strings.ReplaceAll(v, "_", "-")
	}
	return classOther
}

func legend() []legendItem {
	var items []legendItem
	for _, d := range attrs.Decisions() {
		label := string(d)
		if !d.Terminal() {
			label += " (a decision, never an outcome)"
		}
		items = append(items, legendItem{Class: valueClass(string(d)), Value: string(d), Label: label})
	}
	return append(items, legendItem{Class: classOther, Value: "other", Label: "other value, or none"})
}

// clip shortens s to at most n runes for a label in a drawing; the full
// value is in the tooltip and the table.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// textWidth estimates the width in pixels of a label at the drawings'
// 11px font, generously: the labels are placed by it, and the browser
// tests measure that none overflows its drawing.
func textWidth(s string) float64 { return textWidthAt(s, 11) }

// textWidthAt is textWidth at a font of px pixels.
func textWidthAt(s string, px float64) float64 { return 0.6 * px * float64(utf8.RuneCountInString(s)) }

// fit shortens s to what textWidth says fits in width pixels; the full
// value is in the tooltip and the table.
func fit(s string, width float64) string { return fitAt(s, width, 11) }

// fitAt is fit at a font of px pixels.
func fitAt(s string, width, px float64) string {
	return clip(s, max(4, int(width/textWidthAt("m", px))))
}

// fmtMs writes a duration in milliseconds for an axis or a label, with
// the decimals a short operation's axis needs.
func fmtMs(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e12:
		return strconv.FormatFloat(v/1000, 'g', 3, 64) + " s"
	case a >= 1000:
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v/1000, 'f', 2, 64), "0"), ".") + " s"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " ms"
	case a >= 1:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " ms"
	default:
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) + " ms"
	}
}

// axis maps a range of milliseconds onto pixels.
type axis struct {
	lo, hi   float64 // milliseconds
	px0, px1 float64 // pixels
}

func (a axis) x(v float64) float64 {
	if a.hi <= a.lo {
		return a.px0
	}
	f := (v - a.lo) / (a.hi - a.lo)
	f = math.Max(-0.02, math.Min(1.02, f)) // beyond the range: at its edge
	return round1(a.px0 + f*(a.px1-a.px0))
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

type tick struct {
	X     float64
	Label string
}

// niceAxis maps [lo, hi] (lo widened down to a round step, hi by 2%)
// onto pixels and returns its ticks, at round steps, labelled by label.
func niceAxis(lo, hi, px0, px1 float64, label func(float64) string) (axis, []tick) {
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	step := roundUp((hi - lo) / 7)
	lo = math.Floor(lo/step) * step
	hi += (hi - lo) * 0.02
	a := axis{lo: lo, hi: hi, px0: px0, px1: px1}
	var ticks []tick
	for i := 0; i <= 14; i++ {
		v := lo + float64(i)*step
		if v > hi {
			break
		}
		ticks = append(ticks, tick{X: a.x(v), Label: label(v)})
	}
	return a, ticks
}
