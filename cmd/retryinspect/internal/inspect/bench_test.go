// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strconv"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Span sets for BenchmarkAnalyze, n spans each.
var benchShapes = []struct {
	name string
	make func(n int) []model.Span
}{
	// The demo's shape: per operation, an operation span, three attempts
	// (503, 503, 200) and a server span under each: 7 spans, one trace.
	{"operations", func(n int) []model.Span {
		spans := make([]model.Span, 0, n)
		for i := 0; len(spans)+7 <= n; i++ {
			trace := strconv.Itoa(i)
			op := "op-" + trace
			base := len(spans) + 1
			spans = append(spans, operationSpan(trace, base, 0, op, 3, 2000))
			for a := range 3 {
				at := minimalAttempt(trace, base+1+2*a, base, op, int64(a+1), int64(100*a))
				at.Attributes = append(at.Attributes, kv(keyURLFull, model.String("http://h.test/x?k=REDACTED")))
				if a < 2 {
					at.Attributes[4] = kv(keyStatusCode, model.Int(503))
					at.Attributes[7] = kv(keyDecision, model.String(string(attrs.DecisionRetry)))
					at.Attributes = append(at.Attributes, kv(keyBackoffMs, model.Int(40)))
				}
				server := model.Span{TraceID: trace, SpanID: spanID(base + 2 + 2*a), ParentID: spanID(base + 1 + 2*a), Name: "GET /x",
					Kind: model.KindServer, Start: at.Start, End: at.End,
					Attributes: []model.Attribute{kv(keyMethod, model.String("GET")), kv("url.path", model.String("/x"))}}
				spans = append(spans, at, server)
			}
		}
		return spans
	}},
	// Log records of one operation id (a loop resending under it): an
	// operation record and its attempt's, 10 ms apart; byNumber finds each
	// attempt's among all the id's operations.
	{"log records of one id", func(n int) []model.Span { return logRecordsOfOneID(n/2, 10*time.Millisecond) }},
	// One operation whose attempts all run at once (a hedge of a hedge
	// of...), each but the last a retry left to the others in flight: the
	// hedging checks count what overlaps on sorted times.
	{"one race", func(n int) []model.Span {
		spans := []model.Span{operationSpan("t", 1, 0, "op", int64(n-1), 1<<40)}
		for i := 1; i < n; i++ {
			at := minimalAttempt("t", i+1, 1, "op", int64(i), int64(i))
			at.End = hostileBase.Add(time.Duration(2*n-i) * time.Millisecond)
			if i < n-1 {
				at.Attributes[7] = kv(keyDecision, model.String(string(attrs.DecisionRetry)))
				at.Attributes = append(at.Attributes, kv(keyReason, model.String(string(attrs.ReasonInFlight))))
			}
			spans = append(spans, at)
		}
		return spans
	}},
	// One parent chain, an attempt at its end.
	{"chain", func(n int) []model.Span {
		spans := make([]model.Span, 0, n)
		for i := 1; i < n; i++ {
			spans = append(spans, model.Span{TraceID: "t", SpanID: spanID(i), ParentID: parentID(i - 1), Start: hostileBase})
		}
		return append(spans, minimalAttempt("t", n, n-1, "op", 1, 0))
	}},
	// One parent cycle, an attempt under it.
	{"cycle", func(n int) []model.Span {
		spans := make([]model.Span, 0, n)
		for i := 1; i < n; i++ {
			spans = append(spans, model.Span{TraceID: "t", SpanID: spanID(i), ParentID: parentID(i%(n-1) + 1), Start: hostileBase})
		}
		return append(spans, minimalAttempt("t", n, n-1, "op", 1, 0))
	}},
	// Attempts without operation spans, whose operation spans are in
	// another trace (each a missing-operation-span finding).
	{"orphans", func(n int) []model.Span {
		spans := make([]model.Span, 0, n)
		for i := 0; len(spans)+2 <= n; i++ {
			op := "op-" + strconv.Itoa(i)
			spans = append(spans, operationSpan("a", 2*i+1, 0, op, 1, 1000), minimalAttempt("b", 2*i+2, 0, op, 1, 0))
		}
		return spans
	}},
}

// BenchmarkAnalyze measures Analyze over 10k, 100k and 1M spans of each
// shape: time per run, and allocations. The time per span must stay flat
// as n grows (near-linear analysis).
//
//	go test ./internal/inspect -run '^$' -bench Analyze -benchmem -benchtime 3x
func BenchmarkAnalyze(b *testing.B) {
	for _, shape := range benchShapes {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			b.Run(shape.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				spans := shape.make(n)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					Analyze(spans)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(spans)), "ns/span")
			})
		}
	}
}

// logRecordsOfOneID are n operation records of one operation id, each
// with its attempt's record, every apart after the one before (0: all at
// one instant).
func logRecordsOfOneID(n int, every time.Duration) []model.Span {
	spans := make([]model.Span, 0, 2*n)
	for i := range n {
		op := operationSpan("t", 2*i+1, 0, "op-loop", 1, 1000)
		op.Start = hostileBase.Add(time.Duration(i) * every)
		op.End = op.Start.Add(5 * time.Millisecond)
		op.Log, op.ParentID = true, ""
		at := minimalAttempt("t", 2*i+2, 0, "op-loop", 1, 0)
		at.Start, at.End = op.Start, op.Start.Add(time.Millisecond)
		at.Log = true
		at.Attributes[1] = kv(keyRequestID, model.String("op-loop/"+strconv.Itoa(i)+"/attempt-1"))
		spans = append(spans, op, at)
	}
	return spans
}
