// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// oneInstantRun plays calls through one transport over base on virtual time,
// under a handler span, and returns the spans and the OTLP log records.
func oneInstantRun(t *testing.T, base http.RoundTripper, calls func(t *testing.T, c *http.Client, ctx context.Context), tpOpts ...sdktrace.TracerProviderOption) (spans, logs []byte) {
	synctest.Test(t, func(t *testing.T) { spans, logs = realClockRun(t, base, calls, tpOpts...) })
	return spans, logs
}

// realClockRun is oneInstantRun on the clock it is called on.
func realClockRun(t *testing.T, base http.RoundTripper, calls func(t *testing.T, c *http.Client, ctx context.Context), tpOpts ...sdktrace.TracerProviderOption) (spans, logs []byte) {
	var out bytes.Buffer
	tp := spanWriter(t, &out, tpOpts...)
	exp := &otlpJSONExporter{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp), otelretry.WithoutClientSpans())
	ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
	calls(t, &http.Client{Transport: rt}, ctx)
	handler.End()
	tp.Shutdown(context.Background())
	lp.Shutdown(context.Background())
	return out.Bytes(), exp.buf.Bytes()
}

func operationsShape(r *inspect.Report) string {
	var b strings.Builder
	for _, op := range r.Operations {
		var numbers []int64
		for _, at := range op.Attempts {
			numbers = append(numbers, at.Number)
		}
		rd, rp := int64(-1), int64(-1)
		if op.Redirects != nil {
			rd = *op.Redirects
		}
		if op.Repeat != nil {
			rp = *op.Repeat
		}
		fmt.Fprintf(&b, "[redirects %d repeat %d attempts %v] ", rd, rp, numbers)
	}
	return b.String()
}

func logsReadLikeSpans(t *testing.T, spans, logs []byte) {
	t.Helper()
	fromSpans, fromLogs := analyzeWith(t, spans, read.Stdout), analyzeWith(t, logs, read.OTLP)
	ss, ls := operationsShape(fromSpans), operationsShape(fromLogs)
	if ss != ls {
		t.Errorf("operations from the spans: %s\n          from the log records: %s", ss, ls)
	}
	if !slices.EqualFunc(fromSpans.Findings, fromLogs.Findings, sameFinding) {
		var a, b []string
		for _, f := range fromSpans.Findings {
			a = append(a, string(f.Code)+": "+f.Seen)
		}
		for _, f := range fromLogs.Findings {
			b = append(b, string(f.Code)+": "+f.Seen)
		}
		t.Errorf("findings from the spans:\n  %s\nfrom the log records:\n  %s", strings.Join(a, "\n  "), strings.Join(b, "\n  "))
	}
}

// Operations that start at one instant (virtual time; a loop or a
// redirect answered within a clock's tick), from the spans and from the
// log records of the same run: listed as sent, each with its own
// attempts, the same findings from both.

// A loop sends one GET three times under one WithOperationID, each
// answered 200 at once (virtual time: one instant). Each operation has one
// attempt; the numbers go on counting across the repeats (1, 2, 3).
func TestRepeatsUnderOneIDAtOneInstant(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Status: http.StatusOK}), func(t *testing.T, c *http.Client, ctx context.Context) {
		ctx = otelretry.WithOperationID(ctx, "op-loop")
		getTimes(t, c, ctx, "http://a.test/x", 3)
	})
	logsReadLikeSpans(t, spans, logs)
}

// A redirect chain of three hops at one instant: 307, 307, then 503, 200.
func TestThreeHopsAtOneInstant(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(
		redirectTo("http://b.test/y"),
		redirectTo("http://c.test/z"),
		scripted.Step{Status: http.StatusServiceUnavailable},
		scripted.Step{Status: http.StatusOK},
	), func(t *testing.T, c *http.Client, ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/x", nil)
		do(t, c, req)
	})
	logsReadLikeSpans(t, spans, logs)
}

// A redirected GET sent twice at one instant, 307 then 503, 200 the first
// time, 307 then 200 the second: under one WithOperationID (the numbers
// go on counting across both chains), and without one (each chain its
// own generated id, under one parent span).
func TestARedirectChainRepeatedAtOneInstant(t *testing.T) {
	for _, withID := range []bool{true, false} {
		t.Run(fmt.Sprint("id=", withID), func(t *testing.T) {
			spans, logs := oneInstantRun(t, scripted.New(
				redirectTo("http://b.test/y"),
				scripted.Step{Status: http.StatusServiceUnavailable},
				scripted.Step{Status: http.StatusOK},
				redirectTo("http://b.test/y"),
				scripted.Step{Status: http.StatusOK},
			), func(t *testing.T, c *http.Client, ctx context.Context) {
				if withID {
					ctx = otelretry.WithOperationID(ctx, "op-loop")
				}
				getTimes(t, c, ctx, "http://a.test/x", 2)
			})
			logsReadLikeSpans(t, spans, logs)
		})
	}
}

// A redirected GET (307, then 200) sent twice under one WithOperationID,
// all at one instant. Sent in the order A, A-hop2, B, B-hop2; numbered
// 1, 2, 3, 4.
func TestARedirectAndItsRepeatAtOneInstantAreListedAsSent(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(
		redirectTo("http://b.test/y"),
		scripted.Step{Status: http.StatusOK},
		redirectTo("http://b.test/y"),
		scripted.Step{Status: http.StatusOK},
	), func(t *testing.T, c *http.Client, ctx context.Context) {
		ctx = otelretry.WithOperationID(ctx, "op-loop")
		getTimes(t, c, ctx, "http://a.test/x", 2)
	})
	logsReadLikeSpans(t, spans, logs)
	// The report lists operations in the order they were sent.
	r := analyzeWith(t, spans, read.Stdout)
	var first []int64
	for _, op := range r.Operations {
		if len(op.Attempts) > 0 {
			first = append(first, op.Attempts[0].Number)
		}
	}
	if !slices.IsSorted(first) {
		t.Errorf("from the spans, the operations are listed in the order of first attempts %v, not as they were sent: %s", first, operationsShape(r))
	}
}

// A POST redirected (307) to a host that answers 503 at once, sent twice
// by a loop under one WithOperationID, all at one instant: the spans show
// the loop's resend of the chain that failed (outer-layer-resend); the
// records of the same run, whose times are whole milliseconds, cannot
// tell it from a call made at once, and say so (needs-spans).
func TestAWriteChainRepeatedAtOneInstant(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(
		redirectTo("http://b.test/y"),
		scripted.Step{Status: http.StatusServiceUnavailable},
	), func(t *testing.T, c *http.Client, ctx context.Context) {
		postTwice(c, otelretry.WithOperationID(ctx, "op-loop"), "http://a.test/x")
	})
	fromSpans, fromLogs := analyzeWith(t, spans, read.Stdout), analyzeWith(t, logs, read.OTLP)
	if ss, ls := operationsShape(fromSpans), operationsShape(fromLogs); ss != ls {
		t.Errorf("operations from the spans: %s\n          from the log records: %s", ss, ls)
	}
	if len(fromSpans.Findings) != 1 || fromSpans.Findings[0].Code != inspect.CodeOuterLayerResend {
		t.Errorf("from the spans: %v, want one outer-layer-resend", fromSpans.Findings)
	}
	if len(fromLogs.Findings) != 0 || !slices.ContainsFunc(fromLogs.Notes, func(n inspect.Finding) bool { return n.Code == inspect.CodeNeedsSpans }) {
		t.Errorf("from the log records: findings %v, notes %v; want none, and a needs-spans note", fromLogs.Findings, fromLogs.Notes)
	}
}

// A loop sends a POST twice under one WithOperationID. The first is
// redirected (307) to the same URL, whose hop fails with a 503; the loop
// then sends the POST again, answered 503. The second is an outer layer's
// resend of a failed write: reported from the spans when the calls take a
// millisecond, and when they are answered at once (one instant): ordered
// by retry.redirects before retry.operation.repeat, the repeat was read
// before the hop that failed before it was sent, and missed.
func TestAResendAfterAFailedHopAtOneInstantIsFound(t *testing.T) {
	for _, delay := range []time.Duration{time.Millisecond, 0} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			spans, _ := oneInstantRun(t, scripted.New(
				scripted.Step{Delay: delay, Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"http://a.test/x"}}},
				scripted.Step{Delay: delay, Status: http.StatusServiceUnavailable},
			), func(t *testing.T, c *http.Client, ctx context.Context) {
				postTwice(c, otelretry.WithOperationID(ctx, "op-loop"), "http://a.test/x")
			})
			r := analyzeWith(t, spans, read.Stdout)
			var codes []inspect.Code
			for _, f := range r.Findings {
				codes = append(codes, f.Code)
			}
			if !slices.Equal(codes, []inspect.Code{inspect.CodeOuterLayerResend}) {
				t.Errorf("spans: findings %v, want [outer-layer-resend]; operations as listed: %s", codes, operationsShape(r))
			}
		})
	}
}

// More calls under one id at one instant than the 16 operations an
// attempt is compared with at most: a loop's repeats (numbers 1..n), and a
// job's calls each under an id created anew (each counting from 1). The
// first ones' attempts went to the last operation: each number's holders
// are now taken in the order they were sent.
func TestManyCallsUnderOneIDAtOneInstant(t *testing.T) {
	for _, perCall := range []bool{false, true} {
		for _, n := range []int{17, 20} {
			t.Run(fmt.Sprint("id per call=", perCall, ", n=", n), func(t *testing.T) {
				spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Status: http.StatusOK}), func(t *testing.T, c *http.Client, ctx context.Context) {
					loop := otelretry.WithOperationID(ctx, "op-loop")
					for range n {
						if perCall {
							loop = otelretry.WithOperationID(ctx, "op-loop")
						}
						req, _ := http.NewRequestWithContext(loop, http.MethodGet, "http://a.test/x", nil)
						do(t, c, req)
					}
				})
				logsReadLikeSpans(t, spans, logs)
			})
		}
	}
}

// A job's two calls, each under an id created anew, the first answered
// 404 at once, the second 200 after 1 ms: both begin at one instant, and
// their attempt records too (a record's start is its end less its whole
// milliseconds). Which attempt went to which call followed the span ids'
// order; the calls at one instant are taken as the one that ended first
// sent first, and an attempt that ended a whole millisecond after a call
// did is not its.
func TestAReusedIDsAttemptsDoNotDependOnSpanIDs(t *testing.T) {
	for name, ids := range map[string]sdktrace.IDGenerator{"counting up": &countingIDs{}, "alternating": &alternatingIDs{}} {
		t.Run(name, func(t *testing.T) {
			spans, logs := oneInstantRun(t, scripted.New(
				scripted.Step{Status: http.StatusNotFound},
				scripted.Step{Delay: time.Millisecond, Status: http.StatusOK},
			), func(t *testing.T, c *http.Client, ctx context.Context) {
				for range 2 {
					req, _ := http.NewRequestWithContext(otelretry.WithOperationID(ctx, "job"), http.MethodGet, "http://a.test/x", nil)
					do(t, c, req)
				}
			}, sdktrace.WithIDGenerator(ids))
			logsReadLikeSpans(t, spans, logs)
		})
	}
}

// alternatingIDs gives span ids of which every other counts up and the
// others down, as random ids may order them.
type alternatingIDs struct{ countingIDs }

func (g *alternatingIDs) NewSpanID(ctx context.Context, tid trace.TraceID) trace.SpanID {
	sid := g.countingIDs.NewSpanID(ctx, tid)
	if sid[7]%2 == 1 {
		for i := range sid {
			sid[i] = ^sid[i]
		}
	}
	return sid
}

func (g *alternatingIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, _ := g.countingIDs.NewIDs(ctx)
	return tid, g.NewSpanID(ctx, tid)
}

// redirectTo is a scripted 307 to url.
func redirectTo(url string) scripted.Step {
	return scripted.Step{Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {url}}}
}

// getTimes sends a GET of url with ctx through c n times, one after the
// other (a loop above otelretry).
func getTimes(t *testing.T, c *http.Client, ctx context.Context, url string, n int) {
	t.Helper()
	for range n {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		do(t, c, req)
	}
}

// postTwice sends a POST of "{}" to url twice, as a loop would, whatever
// each answer.
func postTwice(c *http.Client, ctx context.Context, url string) {
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}
