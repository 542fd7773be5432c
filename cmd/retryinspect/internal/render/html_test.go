// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// hostile is a value an adversary puts in every string attribute: markup
// in text, attribute and URL positions, quotes, control and bidirectional
// characters.
const hostile = "\"'><script>window.__retryinspectPwned=1</script><img src=x onerror=\"window.__retryinspectPwned=2\">\x1b[31m\r\n\u202e</svg>javascript:alert(1)"

func span(trace, id, parent string, start, end int64, as ...model.Attribute) model.Span {
	base := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	return model.Span{TraceID: trace, SpanID: id, ParentID: parent, Name: hostile,
		Start: base.Add(time.Duration(start) * time.Millisecond), End: base.Add(time.Duration(end) * time.Millisecond), Attributes: as}
}

func str(k, v string) model.Attribute       { return model.Attribute{Key: k, Value: model.String(v)} }
func num(k string, v int64) model.Attribute { return model.Attribute{Key: k, Value: model.Int(v)} }

// hostileReport is one operation whose every string is hostile.
func hostileReport() *inspect.Report {
	return inspect.Analyze([]model.Span{
		span("t1", "a1", "op", 0, 80,
			str(string(attrs.OperationIDKey), hostile), str(string(attrs.RequestIDKey), hostile), num(string(attrs.AttemptKey), 1),
			str(string(attrs.HTTPRequestMethodKey), hostile), str(string(attrs.ErrorClassKey), hostile),
			num(string(attrs.ElapsedMsKey), 80), num(string(attrs.RemainingMsKey), 400),
			str(string(attrs.DecisionKey), hostile), str(string(attrs.ReasonKey), hostile)),
		span("t1", "op", "", 0, 81,
			str(string(attrs.OperationIDKey), hostile), str(string(attrs.OutcomeKey), hostile),
			str(string(attrs.HTTPRequestMethodKey), hostile), str(string(attrs.ServerAddressKey), hostile),
			str(string(attrs.URLFullKey), "http://"+hostile+"@example.com/?token="+hostile), num(string(attrs.DeadlineMsKey), 400)),
	})
}

// TestHTMLEscapes: nothing from the input reaches the page as markup; it
// is shown as the text report shows it.
func TestHTMLEscapes(t *testing.T) {
	r := hostileReport()
	if len(r.Findings) == 0 {
		t.Fatal("the hostile operation raised no finding")
	}
	var buf bytes.Buffer
	if err := HTML(&buf, r, HTMLOptions{Source: hostile}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"<script", "<img", "onerror=\"", "\x1b", "\u202e", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	// The text report's escape of the id, escaped again for HTML.
	want := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(Escape(hostile))
	if !strings.Contains(out, want) {
		t.Errorf("the page lacks the escaped id %q", want)
	}
	if strings.Contains(out, "token="+hostile) {
		t.Error("the URL's query value is not redacted")
	}
}

// TestHTMLLeavesOut: with more timelines than it draws, the page draws
// the first by severity (findings first) and says what it left out.
func TestHTMLLeavesOut(t *testing.T) {
	r := inspect.Analyze(tracefixture.Storm(1000))
	var buf bytes.Buffer
	if err := HTML(&buf, r, HTMLOptions{MaxOperations: 5, MaxFindings: 1}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"1000 operations in 10 timelines, of which the first 5 are drawn",
		"left out: ",
		"and 1 more findings, not listed one by one",
		`data-role="lane"`, // the overview
		`class="first"`,    // as histograms
		`data-role="strip"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(out, `data-role="timeline"`); n != 5 {
		t.Errorf("%d timelines, want 5", n)
	}
	// The operations with findings come first.
	first := out[strings.Index(out, `data-role="operation"`):]
	first = first[:strings.Index(first, "</article>")]
	if !strings.Contains(first, `class="badge"`) {
		t.Errorf("the first timeline has no finding:\n%s", first)
	}
}

// TestTimelineOverlappingAttempts: attempts that overlap in time (a hedged
// request) keep a row each, on the operation's axis, and the one that
// starts before the other ended gets no pause; they share a band, and a
// link drops from the first to the second where it started, though
// neither records retry.hedge.of.
func TestTimelineOverlappingAttempts(t *testing.T) {
	k := func(key attribute.Key) string { return string(key) }
	attempt := func(id string, n, start, elapsed int64, status int64, decision attrs.Decision) model.Span {
		return span("t1", id, "op", start, start+elapsed,
			str(k(attrs.OperationIDKey), "op-hedge"), str(k(attrs.RequestIDKey), fmt.Sprintf("op-hedge/attempt-%d", n)),
			num(k(attrs.AttemptKey), n), str(k(attrs.HTTPRequestMethodKey), "GET"), num(k(attrs.HTTPResponseStatusCodeKey), status),
			num(k(attrs.ElapsedMsKey), elapsed), num(k(attrs.RemainingMsKey), 400-start), str(k(attrs.DecisionKey), string(decision)))
	}
	r := inspect.Analyze([]model.Span{
		attempt("a1", 1, 0, 300, 200, attrs.DecisionReturn),
		attempt("a2", 2, 100, 60, 200, attrs.DecisionReturn),
		span("t1", "op", "", 0, 160, str(k(attrs.OperationIDKey), "op-hedge"), str(k(attrs.OutcomeKey), string(attrs.OutcomeReturn)),
			str(k(attrs.HTTPRequestMethodKey), "GET"), num(k(attrs.DeadlineMsKey), 400)),
	})
	tl := buildTimeline(&r.Operations[0], 0, nil)
	if len(tl.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(tl.Rows))
	}
	a, b := tl.Rows[0], tl.Rows[1]
	if !(b.X > a.X && b.X < a.X+a.W && b.X+b.W < a.X+a.W) {
		t.Errorf("attempt 2 at [%g, %g] does not lie within attempt 1 at [%g, %g]", b.X, b.X+b.W, a.X, a.X+a.W)
	}
	if b.Pause != nil {
		t.Errorf("attempt 2, started while attempt 1 ran, has a pause %+v", b.Pause)
	}
	if a.X+a.W < tlPlotX0+0.6*(tlPlotX1-tlPlotX0) {
		t.Errorf("attempt 1, the operation's end, ends at %g: not on its own axis [%d, %d]", a.X+a.W, tlPlotX0, tlPlotX1)
	}
	if len(tl.Races) != 1 || tl.Races[0].Attempts != "1 2" || tl.Races[0].X > a.X || tl.Races[0].X+tl.Races[0].W < a.X+a.W ||
		tl.Races[0].Y > a.BarY || tl.Races[0].Y+tl.Races[0].H < b.BarY+14 {
		t.Errorf("races %+v; want one band behind both rows %+v %+v", tl.Races, a, b)
	}
	if len(tl.Links) != 1 || tl.Links[0].X != b.X || tl.Links[0].Y1 <= a.BarY || tl.Links[0].Y2 != b.BarY {
		t.Errorf("links %+v; want one from attempt 1's bar to attempt 2's start at %g", tl.Links, b.X)
	}
	if !strings.HasSuffix(b.Label, "alongside #1") {
		t.Errorf("attempt 2's label %q does not say it ran alongside attempt 1", b.Label)
	}
}

// TestTimelineCutOfAHedgedOperation: the cut of a hedged operation starts
// where the attempt it ended on ended (the one whose verdict was
// deadline_exceeded), not after its hedge, which the deadline canceled
// (superseded) and which has the last number.
func TestTimelineCutOfAHedgedOperation(t *testing.T) {
	k := func(key attribute.Key) string { return string(key) }
	attempt := func(id string, n, start, elapsed int64, d attrs.Decision, extra ...model.Attribute) model.Span {
		return span("t1", id, "op", start, start+elapsed, append([]model.Attribute{
			str(k(attrs.OperationIDKey), "op-cut"), str(k(attrs.RequestIDKey), fmt.Sprintf("op-cut/attempt-%d", n)),
			num(k(attrs.AttemptKey), n), str(k(attrs.HTTPRequestMethodKey), "GET"), str(k(attrs.ErrorClassKey), string(attrs.ErrorClassTimeout)),
			num(k(attrs.ElapsedMsKey), elapsed), num(k(attrs.RemainingMsKey), 200-start), str(k(attrs.DecisionKey), string(d))}, extra...)...)
	}
	r := inspect.Analyze([]model.Span{
		attempt("a1", 1, 0, 200, attrs.DecisionDeadlineExceeded, num(k(attrs.BackoffMsKey), 40)),
		attempt("a2", 2, 100, 101, attrs.DecisionSuperseded, num(k(attrs.HedgeOfKey), 1)),
		span("t1", "op", "", 0, 201, str(k(attrs.OperationIDKey), "op-cut"), str(k(attrs.OutcomeKey), string(attrs.OutcomeDeadlineExceeded)),
			str(k(attrs.HTTPRequestMethodKey), "GET"), num(k(attrs.DeadlineMsKey), 200)),
	})
	tl := buildTimeline(&r.Operations[0], 0, nil)
	if tl.Cut == nil || !strings.HasPrefix(tl.Cut.Label, "deadline_exceeded: 0 ms left after attempt 1") {
		t.Fatalf("cut %+v; want it after attempt 1", tl.Cut)
	}
	if a := tl.Rows[0]; math.Abs(tl.Cut.X1-(a.X+a.W)) > 1 {
		t.Errorf("the cut starts at %g, not where attempt 1 ended, %g", tl.Cut.X1, a.X+a.W)
	}
}

// TestTimelineFarDeadline: an operation that ended in 1 ms on a deadline
// of 2 s, after a Retry-After of 30 s, is drawn on its own axis: the
// deadline is a marker past it, and the cut is a stop at the attempt's
// end, not the time left drawn across the axis.
func TestTimelineFarDeadline(t *testing.T) {
	k := func(key attribute.Key) string { return string(key) }
	r := inspect.Analyze([]model.Span{
		span("t1", "a1", "op", 0, 1,
			str(k(attrs.OperationIDKey), "op-busy"), str(k(attrs.RequestIDKey), "op-busy/attempt-1"), num(k(attrs.AttemptKey), 1),
			str(k(attrs.HTTPRequestMethodKey), "GET"), num(k(attrs.HTTPResponseStatusCodeKey), 503), num(k(attrs.ElapsedMsKey), 1),
			num(k(attrs.RemainingMsKey), 2000), num(k(attrs.RetryAfterMsKey), 30000), str(k(attrs.DecisionKey), string(attrs.DecisionDeadlineExceeded))),
		span("t1", "op", "", 0, 1, str(k(attrs.OperationIDKey), "op-busy"), str(k(attrs.OutcomeKey), string(attrs.OutcomeDeadlineExceeded)),
			str(k(attrs.HTTPRequestMethodKey), "GET"), num(k(attrs.DeadlineMsKey), 2000)),
	})
	tl := buildTimeline(&r.Operations[0], 0, nil)
	bar, c := tl.Rows[0], tl.Cut
	if tl.Deadline == nil || !tl.Deadline.OffAxis {
		t.Errorf("deadline %+v, want a marker past the axis", tl.Deadline)
	}
	if bar.W < 0.9*(tlPlotX1-tlPlotX0) {
		t.Errorf("the 1 ms attempt is %g wide, not on its own axis", bar.W)
	}
	if c == nil || c.X1 < bar.X+bar.W-1 || c.HasLeft || c.HasLine || !c.Stop || !c.Arrow {
		t.Errorf("cut %+v after the bar ending at %g: want a stop there, no time left drawn, and the pause past the axis", c, bar.X+bar.W)
	}
	if c != nil && !strings.Contains(c.Label, "1999 ms left after attempt 1, less than the next pause (Retry-After 30000 ms)") {
		t.Errorf("cut label %q", c.Label)
	}
}

// BenchmarkHTML renders the report of Storm(n): the page's size is
// reported as bytes/page.
func BenchmarkHTML(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			r := inspect.Analyze(tracefixture.Storm(n))
			var size int
			for b.Loop() {
				var c countingWriter
				if err := HTML(&c, r, HTMLOptions{}); err != nil {
					b.Fatal(err)
				}
				size = int(c)
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// TestHTMLExtremes: numbers at the ends of their ranges, timestamps years
// apart, no deadline and no attempts: the page is written, its numbers
// finite.
func TestHTMLExtremes(t *testing.T) {
	k := func(key attribute.Key) string { return string(key) }
	var spans []model.Span
	for i, v := range []int64{math.MinInt64, -1, 0, 1, math.MaxInt64} {
		trace := fmt.Sprint("t", i)
		spans = append(spans,
			span(trace, "a1", "op", -1e12, 1e12,
				str(k(attrs.OperationIDKey), "op"), num(k(attrs.AttemptKey), v), num(k(attrs.ElapsedMsKey), v),
				num(k(attrs.RemainingMsKey), v), num(k(attrs.BackoffMsKey), v), num(k(attrs.RetryAfterMsKey), v),
				num(k(attrs.HTTPResponseStatusCodeKey), v), str(k(attrs.DecisionKey), string(attrs.DecisionDeadlineExceeded))),
			span(trace, "a2", "op", 5, 5, str(k(attrs.OperationIDKey), "op"), num(k(attrs.AttemptKey), 2)),
			span(trace, "op", "", 0, 0, str(k(attrs.OperationIDKey), "op"), str(k(attrs.OutcomeKey), string(attrs.OutcomeDeadlineExceeded)),
				num(k(attrs.DeadlineMsKey), v)),
			span(trace+"-empty", "op", "", 3e14, 3e14, str(k(attrs.OutcomeKey), string(attrs.OutcomeDeadlineExceeded))),
		)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, inspect.Analyze(spans), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("the page holds %s", bad)
		}
	}
}

// The cut names the pause that would have crossed the deadline only after
// an attempt that decided deadline_exceeded, and only where the time left
// is less than it: an operation whose state check the deadline ended
// borrowed an earlier attempt's backoff, taken already ("868 ms left ...,
// less than the next pause (backoff 27 ms)").
func TestDescribeCutNamesOnlyAPauseThatWouldHaveCrossed(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name          string
		last          inspect.Attempt
		left          float64
		want          string
		wantPauseDrew bool
	}{
		{"a pause would have crossed", inspect.Attempt{Number: 2, Decision: "deadline_exceeded"}, 30,
			"deadline_exceeded: 30 ms left after attempt 2, less than the next pause (backoff 40 ms)", true},
		{"time enough for the pause", inspect.Attempt{Number: 2, Decision: "deadline_exceeded"}, 868,
			"deadline_exceeded: 868 ms left after attempt 2", false},
		{"no pause was to come: its state check was cut", inspect.Attempt{Number: 2, Decision: "check_state"}, 20,
			"outcome deadline_exceeded: 20 ms left after attempt 2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &inspect.Operation{Outcome: "deadline_exceeded",
				Attempts: []inspect.Attempt{{Number: 1, Decision: "retry", BackoffMs: ms(40)}, tc.last}}
			pause, label := describeCut(op, 1, 100, 100+tc.left)
			if label != tc.want || (pause != nil) != tc.wantPauseDrew {
				t.Errorf("label %q, pause %v; want %q, a pause drawn %v", label, pause, tc.want, tc.wantPauseDrew)
			}
		})
	}
}
