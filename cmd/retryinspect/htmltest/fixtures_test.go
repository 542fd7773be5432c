// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmltest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// Crafted operations, written through the real SDK and stdouttrace
// exporter (tracefixture) and read back as the command reads a file.
// Times are milliseconds from tracefixture.Base.

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// op is an operation span and its attempts.
type op struct {
	id, method, url, server string
	outcome                 string
	deadline                int64
	start, end              int64
	contract                bool
	tries                   []try
	checks                  []stateCheck
	events                  []tracefixture.Event
}

// try is an attempt span.
type try struct {
	requestID                 string // <op id>/attempt-<n> when empty
	n                         int64
	status                    int64  // recorded when not 0
	class                     string // recorded when not ""
	start, elapsed, remaining int64
	decision, reason          string
	backoff                   int64 // recorded when the decision is retry
	retryAfter                int64 // recorded when > 0
	hedgeOf                   int64 // retry.hedge.of, recorded when > 0
	hedgedAfter               int64 // retry.hedge.sent_after_ms, recorded when > 0
}

// stateCheck is a state-check span.
type stateCheck struct {
	result     attrs.StateCheckResult
	start, end int64
}

func (o op) span() tracefixture.Span {
	s := tracefixture.Span{
		Name: "retry " + o.method, Kind: trace.SpanKindInternal, Start: ms(o.start), End: ms(o.end),
		Attrs: []attribute.KeyValue{
			attrs.OperationIDKey.String(o.id), attrs.HTTPRequestMethodKey.String(o.method),
			attrs.URLFullKey.String(o.url), attrs.ServerAddressKey.String(o.server),
			attrs.AttemptsKey.Int(len(o.tries)), attrs.OutcomeKey.String(o.outcome),
			attrs.DeadlineMsKey.Int64(o.deadline),
		},
		Events: o.events,
	}
	if o.contract {
		s.Attrs = append(s.Attrs, attrs.IdempotencyContractKey.Bool(true))
	}
	for _, c := range o.checks {
		s.Children = append(s.Children, tracefixture.Span{
			Name: attrs.StateCheckSpanName, Kind: trace.SpanKindInternal, Start: ms(c.start), End: ms(c.end),
			Attrs: []attribute.KeyValue{attrs.OperationIDKey.String(o.id), c.result.Attribute()},
		})
	}
	for _, t := range o.tries {
		reqID := t.requestID
		if reqID == "" {
			reqID = fmt.Sprintf("%s/attempt-%d", o.id, t.n)
		}
		kvs := []attribute.KeyValue{
			attrs.OperationIDKey.String(o.id), attrs.RequestIDKey.String(reqID), attrs.AttemptKey.Int64(t.n),
			attrs.HTTPRequestMethodKey.String(o.method), attrs.URLFullKey.String(o.url), attrs.ServerAddressKey.String(o.server),
		}
		if t.status != 0 {
			kvs = append(kvs, attrs.HTTPResponseStatusCodeKey.Int64(t.status))
		}
		if t.class != "" {
			kvs = append(kvs, attrs.ErrorClassKey.String(t.class))
		}
		kvs = append(kvs, attrs.ElapsedMsKey.Int64(t.elapsed), attrs.RemainingMsKey.Int64(t.remaining),
			attrs.DecisionKey.String(t.decision), attrs.ReasonKey.String(t.reason))
		if t.decision == string(attrs.DecisionRetry) {
			kvs = append(kvs, attrs.BackoffMsKey.Int64(t.backoff))
		}
		if t.retryAfter > 0 {
			kvs = append(kvs, attrs.RetryAfterMsKey.Int64(t.retryAfter))
		}
		if t.hedgeOf > 0 {
			kvs = append(kvs, attrs.HedgeOfKey.Int64(t.hedgeOf))
		}
		if t.hedgedAfter > 0 {
			kvs = append(kvs, attrs.HedgedAfterMsKey.Int64(t.hedgedAfter))
		}
		s.Children = append(s.Children, tracefixture.Span{
			Name: o.method, Kind: trace.SpanKindClient, Start: ms(t.start), End: ms(t.start + t.elapsed), Attrs: kvs,
		})
	}
	return s
}

const (
	retry      = string(attrs.DecisionRetry)
	ret        = string(attrs.DecisionReturn)
	checkSt    = string(attrs.DecisionCheckState)
	deadline   = string(attrs.DecisionDeadlineExceeded)
	superseded = string(attrs.DecisionSuperseded)
)

// readTimeline is the contract's fixed read: deadline 400 ms, backoff
// 40 ms, 503 (80 ms), 503 (80 ms), 200 (50 ms); remaining 400, 280, 160;
// decisions retry, retry, return.
func readTimeline(start int64) op {
	return op{id: "op-read", method: "GET", url: "http://inventory.internal/items", server: "inventory.internal",
		outcome: string(attrs.OutcomeReturn), deadline: 400, start: start, end: start + 290, tries: []try{
			{n: 1, status: 503, start: start, elapsed: 80, remaining: 400, decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40},
			{n: 2, status: 503, start: start + 120, elapsed: 80, remaining: 280, decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40},
			{n: 3, status: 200, start: start + 240, elapsed: 50, remaining: 160, decision: ret, reason: string(attrs.ReasonResponse)},
		}}
}

// writeTimeout is the contract's fixed write: one POST that times out
// after 120 ms, decision check_state, no second call.
func writeTimeout(start int64) op {
	return op{id: "op-write", method: "POST", url: "http://payments.internal/orders", server: "payments.internal",
		outcome: string(attrs.OutcomeCheckState), deadline: 400, start: start, end: start + 121, tries: []try{
			{n: 1, class: string(attrs.ErrorClassTimeout), start: start, elapsed: 120, remaining: 400, decision: checkSt, reason: string(attrs.ReasonUnknownWrite)},
		}}
}

// deadlineCut is a read the deadline stops: after a 503 at 120 ms, 30 ms
// remain, less than the 40 ms backoff: deadline_exceeded, no third call.
func deadlineCut(start int64) op {
	return op{id: "op-slow", method: "GET", url: "http://inventory.internal/items", server: "inventory.internal",
		outcome: string(attrs.OutcomeDeadlineExceeded), deadline: 200, start: start, end: start + 171, tries: []try{
			{n: 1, status: 503, start: start, elapsed: 80, remaining: 200, decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40},
			{n: 2, status: 503, start: start + 120, elapsed: 50, remaining: 80, decision: deadline, reason: string(attrs.ReasonDeadline)},
		}}
}

// storm is an incident: inventory.internal answers 503 from 1 s on, so
// that its reads retry up to their attempt limit, until the retry budget
// refuses their retries (budget_exhausted); one read is cut by its
// deadline; a read of catalog.internal gets a Retry-After far past its
// deadline and ends in 1 ms; payments.internal has the contract's write,
// a resend after a state check, and an unsafe resend (a finding); the
// users.internal reads all return at once.
func storm() []tracefixture.Span {
	const stormOps, refusedFrom = 44, 30 // the reads from refusedFrom on are refused a retry
	ops := []op{writeTimeout(150)}
	for i := range 4 { // before the storm
		start := int64(100 + 200*i)
		ops = append(ops, op{id: fmt.Sprintf("op-items-%d", i+1), method: "GET", url: "http://inventory.internal/items", server: "inventory.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 600, start: start, end: start + 41, tries: []try{
				{n: 1, status: 200, start: start, elapsed: 40, remaining: 600, decision: ret, reason: string(attrs.ReasonResponse)},
			}})
	}
	for i := range stormOps {
		start := int64(1000 + 50*i)
		o := op{id: fmt.Sprintf("op-items-%d", i+5), method: "GET", url: "http://inventory.internal/items", server: "inventory.internal",
			deadline: 600, start: start}
		if i >= refusedFrom {
			o.outcome, o.end = string(attrs.OutcomeBudgetExhausted), start+61
			o.tries = []try{{n: 1, status: 503, start: start, elapsed: 60, remaining: 600, decision: string(attrs.DecisionBudgetExhausted), reason: string(attrs.ReasonBudget)}}
		} else {
			o.outcome, o.end = string(attrs.OutcomeMaxAttempts), start+281
			for n := int64(1); n <= 3; n++ {
				t := try{n: n, status: 503, start: start + (n-1)*110, elapsed: 60 + 10*(n-1), remaining: 600 - (n-1)*110,
					decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40}
				if n == 3 {
					t.decision, t.reason = string(attrs.DecisionMaxAttempts), string(attrs.ReasonAttemptLimit)
				}
				o.tries = append(o.tries, t)
			}
		}
		ops = append(ops, o)
	}
	ops = append(ops, deadlineCut(2900))
	// The attempt records 0 ms (its elapsed time, rounded down); the
	// operation ends 1 ms after its start.
	ops = append(ops, op{id: "op-busy", method: "GET", url: "http://catalog.internal/busy", server: "catalog.internal",
		outcome: string(attrs.OutcomeDeadlineExceeded), deadline: 2000, start: 1400, end: 1401, tries: []try{
			{n: 1, status: 503, start: 1400, elapsed: 0, remaining: 2000, decision: deadline, reason: string(attrs.ReasonDeadline), retryAfter: 30000},
		}})
	ops = append(ops,
		op{id: "op-pay", method: "POST", url: "http://payments.internal/orders", server: "payments.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 1000, start: 700, end: 871, tries: []try{
				{n: 1, class: string(attrs.ErrorClassTimeout), start: 700, elapsed: 120, remaining: 1000, decision: checkSt, reason: string(attrs.ReasonUnknownWrite)},
				{n: 2, status: 201, start: 840, elapsed: 30, remaining: 860, decision: ret, reason: string(attrs.ReasonResponse)},
			}, checks: []stateCheck{{attrs.StateNotApplied, 825, 835}}},
		op{id: "op-refund", method: "POST", url: "http://payments.internal/refunds", server: "payments.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 1000, start: 1500, end: 1801, tries: []try{
				{n: 1, class: string(attrs.ErrorClassTimeout), start: 1500, elapsed: 250, remaining: 1000, decision: retry, reason: string(attrs.ReasonRetryableError), backoff: 40},
				{n: 2, status: 201, start: 1790, elapsed: 10, remaining: 710, decision: ret, reason: string(attrs.ReasonResponse)},
			}})
	for i := range 6 {
		start := int64(300 + 500*i)
		ops = append(ops, op{id: fmt.Sprintf("op-user-%d", i+1), method: "GET", url: "http://users.internal/users/REDACTED", server: "users.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 400, start: start, end: start + 31, tries: []try{
				{n: 1, status: 200, start: start, elapsed: 30, remaining: 400, decision: ret, reason: string(attrs.ReasonResponse)},
			}})
	}
	return spansOf(ops)
}

// cleanRun is a run without a finding in which every operation returns:
// reads that succeed at once, reads that succeed after one 503, a write.
func cleanRun() []tracefixture.Span {
	var ops []op
	for i := range 8 {
		start := int64(100 * i)
		ops = append(ops, op{id: fmt.Sprintf("op-user-%d", i+1), method: "GET", url: "http://users.internal/users/REDACTED", server: "users.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 400, start: start, end: start + 21, tries: []try{
				{n: 1, status: 200, start: start, elapsed: 20, remaining: 400, decision: ret, reason: string(attrs.ReasonResponse)},
			}})
	}
	for i := range 3 {
		start := int64(150 + 250*i)
		ops = append(ops, op{id: fmt.Sprintf("op-items-%d", i+1), method: "GET", url: "http://inventory.internal/items", server: "inventory.internal",
			outcome: string(attrs.OutcomeReturn), deadline: 400, start: start, end: start + 131, tries: []try{
				{n: 1, status: 503, start: start, elapsed: 50, remaining: 400, decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40},
				{n: 2, status: 200, start: start + 90, elapsed: 40, remaining: 310, decision: ret, reason: string(attrs.ReasonResponse)},
			}})
	}
	ops = append(ops, op{id: "op-order", method: "POST", url: "http://payments.internal/orders", server: "payments.internal",
		outcome: string(attrs.OutcomeReturn), deadline: 1000, start: 500, end: 561, tries: []try{
			{n: 1, status: 201, start: 500, elapsed: 60, remaining: 1000, decision: ret, reason: string(attrs.ReasonResponse)},
		}})
	return spansOf(ops)
}

// hedgedReads are reads hedged after 50 ms, as otelretry's WithHedging
// records them: a hedge that wins (the attempt it hedged superseded), an
// attempt that wins over its hedge, a 503 while the hedge is in flight
// (retry, in_flight), two rounds (both attempts fail, the retry is hedged
// again), a hedge the dependency's rate refuses, and reads that answer
// before the delay; and a search sent as POST, declared repeatable,
// hedged.
func hedgedReads() []tracefixture.Span {
	const items = "http://inventory.internal/items"
	sent := func(at, n, of int64) tracefixture.Event {
		return tracefixture.Event{Name: attrs.EventHedgeSent, At: ms(at), Attrs: []attribute.KeyValue{
			attrs.AttemptKey.Int64(n), attrs.HedgeOfKey.Int64(of), attrs.HedgeDelayMsKey.Int(50)}}
	}
	read := func(id string, start, end int64, tries ...try) op {
		return op{id: id, method: "GET", url: items, server: "inventory.internal", outcome: string(attrs.OutcomeReturn),
			deadline: 1000, start: start, end: end, tries: tries}
	}
	canceled, other := string(attrs.ErrorClassCanceled), string(attrs.ReasonOtherAttempt)
	response, inFlight := string(attrs.ReasonResponse), string(attrs.ReasonInFlight)
	hedgeWon := read("op-hedge-won", 0, 91,
		try{n: 1, class: canceled, start: 0, elapsed: 91, remaining: 1000, decision: superseded, reason: other, hedgedAfter: 50},
		try{n: 2, status: 200, start: 50, elapsed: 40, remaining: 950, decision: ret, reason: response, hedgeOf: 1})
	hedgeWon.events = []tracefixture.Event{sent(50, 2, 1)}
	firstWon := read("op-first-won", 300, 371,
		try{n: 1, status: 200, start: 300, elapsed: 70, remaining: 1000, decision: ret, reason: response, hedgedAfter: 50},
		try{n: 2, class: canceled, start: 350, elapsed: 21, remaining: 950, decision: superseded, reason: other, hedgeOf: 1})
	firstWon.events = []tracefixture.Event{sent(350, 2, 1)}
	inFlightRetry := read("op-in-flight", 600, 711,
		try{n: 1, status: 503, start: 600, elapsed: 80, remaining: 1000, decision: retry, reason: inFlight, hedgedAfter: 50},
		try{n: 2, status: 200, start: 650, elapsed: 60, remaining: 950, decision: ret, reason: response, hedgeOf: 1})
	inFlightRetry.events = []tracefixture.Event{sent(650, 2, 1)}
	rounds := read("op-two-rounds", 900, 1161,
		try{n: 1, status: 503, start: 900, elapsed: 100, remaining: 1000, decision: retry, reason: inFlight, hedgedAfter: 50},
		try{n: 2, status: 503, start: 950, elapsed: 100, remaining: 950, decision: retry, reason: string(attrs.ReasonRetryableStatus), backoff: 40, hedgeOf: 1},
		try{n: 3, status: 200, start: 1090, elapsed: 70, remaining: 810, decision: ret, reason: response, hedgedAfter: 50},
		try{n: 4, class: canceled, start: 1140, elapsed: 21, remaining: 760, decision: superseded, reason: other, hedgeOf: 3})
	rounds.events = []tracefixture.Event{sent(950, 2, 1), sent(1140, 4, 3)}
	refused := read("op-rate-limited", 1300, 1421,
		try{n: 1, status: 200, start: 1300, elapsed: 120, remaining: 1000, decision: ret, reason: response})
	refused.events = []tracefixture.Event{{Name: attrs.EventHedgeRefused, At: ms(1350), Attrs: []attribute.KeyValue{
		attrs.HedgeOfKey.Int(1), attrs.HedgeDelayMsKey.Int(50), attrs.ReasonHedgeLimit.Attribute()}}}
	ops := []op{hedgeWon, firstWon, inFlightRetry, rounds, refused}
	for i := range 3 {
		start := int64(1500 + 100*i)
		ops = append(ops, read(fmt.Sprintf("op-quick-%d", i+1), start, start+31,
			try{n: 1, status: 200, start: start, elapsed: 30, remaining: 1000, decision: ret, reason: response}))
	}
	search := op{id: "op-search", method: "POST", url: "http://search.internal/query", server: "search.internal",
		outcome: string(attrs.OutcomeReturn), deadline: 1000, contract: true, start: 1900, end: 1991, tries: []try{
			{n: 1, class: canceled, start: 1900, elapsed: 91, remaining: 1000, decision: superseded, reason: other, hedgedAfter: 50},
			{n: 2, status: 200, start: 1950, elapsed: 40, remaining: 950, decision: ret, reason: response, hedgeOf: 1},
		}, events: []tracefixture.Event{sent(1950, 2, 1)}}
	return spansOf(append(ops, search))
}

func spansOf(ops []op) []tracefixture.Span {
	roots := make([]tracefixture.Span, len(ops))
	for i, o := range ops {
		roots[i] = o.span()
	}
	return roots
}

// report reads roots back as `retryinspect FILE` does and analyzes
// them.
func report(t testing.TB, roots ...tracefixture.Span) *inspect.Report {
	t.Helper()
	var buf bytes.Buffer
	if err := tracefixture.WriteStdout(&buf, false, roots...); err != nil {
		t.Fatal(err)
	}
	spans, err := read.Stdout(&buf, "spans.json", read.DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return inspect.Analyze(spans)
}

// pageOf renders the HTML report of r as `retryinspect -html` does.
func pageOf(t testing.TB, r *inspect.Report, source string) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := render.HTML(&out, r, render.HTMLOptions{Source: source}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
