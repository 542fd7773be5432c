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
	want := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(escape(hostile))
	if !strings.Contains(out, want) {
		t.Errorf("the page lacks the escaped id %q", want)
	}
	if strings.Contains(out, "token="+hostile) {
		t.Error("the URL's query value is not redacted")
	}
}

// TestHTMLLeavesOut: with more operations than it draws, the page draws
// the worst first and says what it left out.
func TestHTMLLeavesOut(t *testing.T) {
	r := inspect.Analyze(tracefixture.Storm(1000))
	var buf bytes.Buffer
	if err := HTML(&buf, r, HTMLOptions{MaxOperations: 50, MaxFindings: 1}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"the 50 worst of 1000 operations, worst first",
		"left out: 950 operations with ",
		"and 1 more findings, not listed one by one",
		`data-role="lane"`, // the overview
		`class="first"`,    // as histograms
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(out, `data-role="timeline"`); n != 50 {
		t.Errorf("%d timelines, want 50", n)
	}
	// The operations with findings come first.
	first := out[strings.Index(out, `data-role="operation"`):]
	first = first[:strings.Index(first, "</article>")]
	if !strings.Contains(first, `class="badge"`) {
		t.Errorf("the first timeline has no finding:\n%s", first)
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
