// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv120 "go.opentelemetry.io/otel/semconv/v1.20.0"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// Crafted span sets. Every attribute name comes from attrs (or semconv for
// keys outside the retry contract); times are milliseconds from
// tracefixture.Base.

const server = "127.0.0.1:8080"

func endpoint(path string) string { return "http://" + server + path }

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// op describes an operation span.
type op struct {
	id, method, url string
	outcome         attrs.Outcome
	attempts        int64 // retry.attempts
	budget          int64 // retry.deadline_ms
	legacyBudget    bool  // write it as retry.budget_ms, its name before v0.2.0
	start, end      int64
	contract        bool
	redirects       int64                // retry.redirects, when > 0
	repeat          int64                // retry.operation.repeat, when > 0
	omit            bool                 // the span is lost (never exported)
	drop            []attribute.Key      // contract attributes left out
	extra           []attribute.KeyValue // added or overriding attributes
	events          []tracefixture.Event
	children        []tracefixture.Span
}

func (o op) span() tracefixture.Span {
	deadline := attrs.DeadlineMsKey.Int64(o.budget)
	if o.legacyBudget {
		deadline = attrs.LegacyBudgetMsKey.Int64(o.budget)
	}
	kvs := []attribute.KeyValue{
		attrs.OperationIDKey.String(o.id),
		attrs.HTTPRequestMethodKey.String(o.method),
		attrs.URLFullKey.String(o.url),
		attrs.ServerAddressKey.String(strings.Split(server, ":")[0]),
		attrs.AttemptsKey.Int64(o.attempts),
		o.outcome.Attribute(),
		deadline,
	}
	if o.contract {
		kvs = append(kvs, attrs.IdempotencyContractKey.Bool(true))
	}
	if o.redirects > 0 {
		kvs = append(kvs, attrs.RedirectsKey.Int64(o.redirects))
	}
	if o.repeat > 0 {
		kvs = append(kvs, attrs.RepeatKey.Int64(o.repeat))
	}
	return tracefixture.Span{
		Name: "retry " + o.method, Kind: trace.SpanKindInternal,
		Start: ms(o.start), End: ms(o.end),
		Attrs: edit(kvs, o.drop, o.extra), Events: o.events, Children: o.children, Omit: o.omit,
	}
}

// try describes an attempt span; with url set it gets an otelhttp-like
// client span and a server span below it. With client set it has the span
// shape of v0.2 instead: the attempt span is otelhttp's CLIENT span, named
// by the method, with the server span below it.
type try struct {
	opID, requestID  string // requestID defaults to <opID>/attempt-<n>
	n                int64
	method, url      string
	status           int64
	class            attrs.ErrorClass
	start, elapsed   int64
	remaining        int64
	decision         attrs.Decision
	reason           attrs.Reason // recorded when set
	backoff          int64        // recorded when decision is retry
	retryAfter       int64        // recorded when > 0
	hedgeOf          int64        // retry.hedge.of, recorded when > 0
	hedgedAfter      int64        // retry.hedge.sent_after_ms, recorded when > 0
	repeat           int          // extra deliveries
	tamper           []attribute.KeyValue
	client           bool
	drop             []attribute.Key
	extra            []attribute.KeyValue
	clientAttrs      []attribute.KeyValue // extra attributes of the client span
	serverAttrs      []attribute.KeyValue // extra attributes of the server span
	serverService    string               // the server span's service.name, when another than the client's
	withoutHTTPSpans bool
}

func (t try) span() tracefixture.Span {
	reqID := t.requestID
	if reqID == "" {
		reqID = fmt.Sprintf("%s/attempt-%d", t.opID, t.n)
	}
	kvs := []attribute.KeyValue{
		attrs.OperationIDKey.String(t.opID),
		attrs.RequestIDKey.String(reqID),
		attrs.AttemptKey.Int64(t.n),
		attrs.HTTPRequestMethodKey.String(t.method),
	}
	if t.status != 0 {
		kvs = append(kvs, attrs.HTTPResponseStatusCodeKey.Int64(t.status))
	}
	if t.class != "" {
		kvs = append(kvs, t.class.Attribute())
	}
	kvs = append(kvs,
		attrs.ElapsedMsKey.Int64(t.elapsed),
		attrs.RemainingMsKey.Int64(t.remaining),
		t.decision.Attribute())
	if t.reason != "" {
		kvs = append(kvs, t.reason.Attribute())
	}
	if t.retryAfter > 0 {
		kvs = append(kvs, attrs.RetryAfterMsKey.Int64(t.retryAfter))
	}
	if t.decision == attrs.DecisionRetry {
		kvs = append(kvs, attrs.BackoffMsKey.Int64(t.backoff))
	}
	if t.n > 1 {
		kvs = append(kvs, attrs.HTTPRequestResendCountKey.Int64(t.n-1))
	}
	if t.hedgeOf > 0 {
		kvs = append(kvs, attrs.HedgeOfKey.Int64(t.hedgeOf))
	}
	if t.hedgedAfter > 0 {
		kvs = append(kvs, attrs.HedgedAfterMsKey.Int64(t.hedgedAfter))
	}
	if t.client {
		// otelhttp's client span carries the attempt event.
		c := t.clientSpan()
		kvs = append(kvs, attrs.URLFullKey.String(t.url), attrs.ServerAddressKey.String(strings.Split(server, ":")[0]))
		switch {
		case t.class != "":
			kvs = append(kvs, attrs.ErrorTypeKey.String(string(t.class)))
		case t.status >= 400:
			kvs = append(kvs, attrs.ErrorTypeKey.String(fmt.Sprint(t.status)))
		}
		c.Name, c.Attrs = t.method, edit(append(kvs, t.clientAttrs...), t.drop, t.extra)
		c.Repeat, c.Tamper = t.repeat, t.tamper
		return c
	}
	s := tracefixture.Span{
		Name: "attempt", Kind: trace.SpanKindInternal,
		Start: ms(t.start), End: ms(t.start + t.elapsed),
		Attrs: edit(kvs, t.drop, t.extra), Repeat: t.repeat, Tamper: t.tamper,
	}
	if t.url != "" && !t.withoutHTTPSpans {
		s.Children = []tracefixture.Span{t.clientSpan()}
	}
	return s
}

// clientSpan imitates the otelhttp client span of an attempt (and the
// server span of an instrumented server when a response came back).
func (t try) clientSpan() tracefixture.Span {
	kvs := []attribute.KeyValue{
		attrs.HTTPRequestMethodKey.String(t.method),
		attrs.URLFullKey.String(t.url),
		attrs.ServerAddressKey.String(strings.Split(server, ":")[0]),
	}
	if t.status != 0 {
		kvs = append(kvs, attrs.HTTPResponseStatusCodeKey.Int64(t.status))
	}
	client := tracefixture.Span{
		Name: "HTTP " + t.method, Kind: trace.SpanKindClient,
		Start: ms(t.start), End: ms(t.start + t.elapsed),
		Attrs: append(kvs, t.clientAttrs...),
	}
	if t.status != 0 {
		path := t.url[strings.Index(t.url, server)+len(server):]
		path, _, _ = strings.Cut(path, "?")
		client.Children = []tracefixture.Span{{
			Name: t.method + " " + path, Kind: trace.SpanKindServer,
			Start: ms(t.start), End: ms(t.start + t.elapsed),
			Attrs: append([]attribute.KeyValue{
				attrs.HTTPRequestMethodKey.String(t.method),
				semconv.URLPathKey.String(path),
				attrs.HTTPResponseStatusCodeKey.Int64(t.status),
			}, t.serverAttrs...),
			Service: t.serverService,
		}}
	}
	return client
}

// stateCheck is a state_check span of operation opID checking the given
// attempt (none when 0, as in traces of earlier releases).
func stateCheck(opID string, attempt int64, result attrs.StateCheckResult, start, end int64) tracefixture.Span {
	kvs := []attribute.KeyValue{attrs.OperationIDKey.String(opID), result.Attribute()}
	if attempt != 0 {
		kvs = append(kvs, attrs.StateCheckAttemptKey.Int64(attempt))
	}
	return tracefixture.Span{
		Name: attrs.StateCheckSpanName, Kind: trace.SpanKindInternal,
		Start: ms(start), End: ms(end),
		Attrs: kvs,
	}
}

// edit drops keys from kvs and then sets extra, replacing same-key values.
func edit(kvs []attribute.KeyValue, drop []attribute.Key, extra []attribute.KeyValue) []attribute.KeyValue {
	out := slices.DeleteFunc(slices.Clone(kvs), func(kv attribute.KeyValue) bool {
		return slices.Contains(drop, kv.Key) || slices.ContainsFunc(extra, func(e attribute.KeyValue) bool { return e.Key == kv.Key })
	})
	return append(out, extra...)
}

func children(spans ...tracefixture.Span) []tracefixture.Span { return spans }

// hedgeSent is the operation span's event for a hedge, attempt n of
// attempt of, sent at offset at after delay.
func hedgeSent(at, n, of, delay int64) tracefixture.Event {
	return tracefixture.Event{Name: attrs.EventHedgeSent, At: ms(at), Attrs: []attribute.KeyValue{
		attrs.AttemptKey.Int64(n), attrs.HedgeOfKey.Int64(of), attrs.HedgeDelayMsKey.Int64(delay)}}
}

// hedgeRefused is the operation span's event for a hedge of attempt of
// refused at offset at, after delay, for reason.
func hedgeRefused(at, of, delay int64, reason attrs.Reason) tracefixture.Event {
	return tracefixture.Event{Name: attrs.EventHedgeRefused, At: ms(at), Attrs: []attribute.KeyValue{
		attrs.HedgeOfKey.Int64(of), attrs.HedgeDelayMsKey.Int64(delay), reason.Attribute()}}
}

// readTimeline is the contract's fixed read: deadline 400 ms, backoff 40 ms,
// 503 (80 ms), 503 (80 ms), 200 (50 ms); remaining 400, 280, 160.
func readTimeline() tracefixture.Span {
	url := endpoint("/items")
	return op{id: "op-read", method: "GET", url: url, outcome: attrs.OutcomeReturn, attempts: 3, budget: 400, start: 0, end: 290,
		children: children(
			try{opID: "op-read", n: 1, method: "GET", url: url, status: 503, start: 0, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
			try{opID: "op-read", n: 2, method: "GET", url: url, status: 503, start: 120, elapsed: 80, remaining: 280, decision: attrs.DecisionRetry, backoff: 40}.span(),
			try{opID: "op-read", n: 3, method: "GET", url: url, status: 200, start: 240, elapsed: 50, remaining: 160, decision: attrs.DecisionReturn}.span(),
		)}.span()
}

// writeTimeout is the contract's fixed write: POST timeout after 120 ms,
// check_state, exactly one call.
func writeTimeout() tracefixture.Span {
	url := endpoint("/orders")
	return op{id: "op-write", method: "POST", url: url, outcome: attrs.OutcomeCheckState, attempts: 1, budget: 400, start: 1000, end: 1121,
		children: children(
			try{opID: "op-write", n: 1, method: "POST", url: url, class: attrs.ErrorClassTimeout, start: 1000, elapsed: 120, remaining: 400, decision: attrs.DecisionCheckState}.span(),
		)}.span()
}

// goldenCase is one crafted span set and the exit status it must give.
type goldenCase struct {
	name  string
	roots []tracefixture.Span
	json  bool           // also compare the --json output
	want  []inspect.Code // findings
	notes []inspect.Code
}

func goldenCases() []goldenCase {
	orders, items := endpoint("/orders"), endpoint("/items")
	return []goldenCase{
		{name: "clean-read", roots: []tracefixture.Span{readTimeline()}, json: true},
		{name: "clean", json: true, roots: []tracefixture.Span{
			readTimeline(),
			writeTimeout(),
			// A state check answers not_applied: the write may be resent.
			op{id: "op-write-checked", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 2000, end: 2171,
				children: children(
					try{opID: "op-write-checked", n: 1, method: "POST", url: orders, class: attrs.ErrorClassTimeout, start: 2000, elapsed: 120, remaining: 1000, decision: attrs.DecisionCheckState}.span(),
					stateCheck("op-write-checked", 1, attrs.StateNotApplied, 2125, 2135),
					try{opID: "op-write-checked", n: 2, method: "POST", url: orders, status: 201, start: 2140, elapsed: 30, remaining: 860, decision: attrs.DecisionReturn}.span(),
				)}.span(),
			// A refused connection proves the POST never left: retry allowed.
			op{id: "op-create", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, start: 3000, end: 3073,
				children: children(
					try{opID: "op-create", n: 1, method: "POST", url: orders, class: attrs.ErrorClassConnectionRefused, start: 3000, elapsed: 2, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
					try{opID: "op-create", n: 2, method: "POST", url: orders, status: 201, start: 3042, elapsed: 30, remaining: 358, decision: attrs.DecisionReturn}.span(),
				)}.span(),
			// An idempotency contract makes the resent POST legitimate.
			op{id: "op-pay", method: "POST", url: endpoint("/payments"), outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, contract: true, start: 4000, end: 4151,
				children: children(
					try{opID: "op-pay", n: 1, method: "POST", url: endpoint("/payments"), status: 503, start: 4000, elapsed: 60, remaining: 400, decision: attrs.DecisionRetry, backoff: 40, retryAfter: 30}.span(),
					try{opID: "op-pay", n: 2, method: "POST", url: endpoint("/payments"), status: 200, start: 4100, elapsed: 50, remaining: 300, decision: attrs.DecisionReturn}.span(),
				)}.span(),
			// 503 then the budget cannot cover the backoff.
			op{id: "op-deadline", method: "GET", url: items, outcome: attrs.OutcomeDeadlineExceeded, attempts: 1, budget: 100, start: 5000, end: 5081,
				children: children(
					try{opID: "op-deadline", n: 1, method: "GET", url: items, status: 503, start: 5000, elapsed: 80, remaining: 100, decision: attrs.DecisionDeadlineExceeded, retryAfter: 1000}.span(),
				)}.span(),
			// The caller canceled during the backoff: retry was the last decision.
			op{id: "op-canceled", method: "GET", url: items, outcome: attrs.OutcomeCanceled, attempts: 1, budget: 400, start: 6000, end: 6090,
				children: children(
					try{opID: "op-canceled", n: 1, method: "GET", url: items, status: 503, start: 6000, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				)}.span(),
			// The deadline was spent before the first call: no attempt at all.
			op{id: "op-late", method: "GET", url: items, outcome: attrs.OutcomeDeadlineExceeded, attempts: 0, budget: 0, start: 7000, end: 7000}.span(),
			// Two operations in one trace, under one server handler.
			{Name: "GET /checkout", Kind: trace.SpanKindServer, Start: ms(8000), End: ms(8100), Children: children(
				op{id: "op-cart", method: "GET", url: endpoint("/cart"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, start: 8001, end: 8031,
					children: children(try{opID: "op-cart", n: 1, method: "GET", url: endpoint("/cart"), status: 200, start: 8001, elapsed: 30, remaining: 400, decision: attrs.DecisionReturn}.span())}.span(),
				op{id: "op-stock", method: "GET", url: endpoint("/stock?sku=REDACTED"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, start: 8040, end: 8070,
					children: children(try{opID: "op-stock", n: 1, method: "GET", url: endpoint("/stock?sku=REDACTED"), status: 200, start: 8040, elapsed: 30, remaining: 400, decision: attrs.DecisionReturn}.span())}.span(),
			)},
		}},
		{name: "status-and-error-class", want: []inspect.Code{inspect.CodeStatusAndErrorClass}, roots: []tracefixture.Span{
			op{id: "op-both", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, end: 200, children: children(
				try{opID: "op-both", n: 1, method: "GET", url: items, status: 503, class: attrs.ErrorClassTimeout, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-both", n: 2, method: "GET", url: items, status: 200, start: 120, elapsed: 50, remaining: 280, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "no-status-or-error-class", want: []inspect.Code{inspect.CodeNoStatusOrErrorClass}, roots: []tracefixture.Span{
			op{id: "op-blank", method: "GET", url: items, outcome: attrs.OutcomeStop, attempts: 1, budget: 400, end: 81, children: children(
				try{opID: "op-blank", n: 1, method: "GET", url: items, elapsed: 80, remaining: 400, decision: attrs.DecisionStop}.span(),
			)}.span(),
		}},
		{name: "remaining-grows", want: []inspect.Code{inspect.CodeRemainingGrows}, roots: []tracefixture.Span{
			op{id: "op-wall", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 3, budget: 400, end: 290, children: children(
				try{opID: "op-wall", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-wall", n: 2, method: "GET", url: items, status: 503, start: 120, elapsed: 80, remaining: 280, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-wall", n: 3, method: "GET", url: items, status: 200, start: 240, elapsed: 50, remaining: 350, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "retry-without-next", want: []inspect.Code{inspect.CodeRetryWithoutNext}, roots: []tracefixture.Span{
			op{id: "op-dangling", method: "GET", url: items, outcome: attrs.OutcomeMaxAttempts, attempts: 2, budget: 1000, end: 300, children: children(
				try{opID: "op-dangling", n: 1, method: "GET", url: items, class: attrs.ErrorClassTimeout, elapsed: 100, remaining: 1000, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-dangling", n: 2, method: "GET", url: items, class: attrs.ErrorClassTimeout, start: 140, elapsed: 100, remaining: 860, decision: attrs.DecisionRetry, backoff: 40}.span(),
			)}.span(),
		}},
		{name: "retry-abandoned-is-explained", roots: []tracefixture.Span{
			// The retry's call was not made (its PrepareAttemptFunc failed): the
			// operation span says so, and nothing is a finding.
			op{id: "op-abandoned", method: "GET", url: items, outcome: attrs.OutcomeStop, attempts: 1, budget: 1000, end: 150,
				extra: []attribute.KeyValue{attrs.AbandonedAttemptKey.Int(2)}, children: children(
					try{opID: "op-abandoned", n: 1, method: "GET", url: items, status: 503, elapsed: 100, remaining: 1000, decision: attrs.DecisionRetry, backoff: 40}.span(),
				)}.span(),
		}},
		{name: "retry-abandoned-unexplained", want: []inspect.Code{inspect.CodeRetryWithoutNext}, roots: []tracefixture.Span{
			op{id: "op-unexplained", method: "GET", url: items, outcome: attrs.OutcomeStop, attempts: 1, budget: 1000, end: 150, children: children(
				try{opID: "op-unexplained", n: 1, method: "GET", url: items, status: 503, elapsed: 100, remaining: 1000, decision: attrs.DecisionRetry, backoff: 40}.span(),
			)}.span(),
		}},
		{name: "operation-id-split", want: []inspect.Code{inspect.CodeOperationIDSplit}, roots: []tracefixture.Span{
			// The wrapper made a fresh id for the second attempt.
			op{id: "op-a", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, end: 200, children: children(
				try{opID: "op-a", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-a-2", n: 2, method: "GET", url: items, status: 200, start: 120, elapsed: 50, remaining: 280, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "operation-id-split-without-operation-span",
			want:  []inspect.Code{inspect.CodeRetryWithoutNext, inspect.CodeOperationIDSplit, inspect.CodeAttemptNumbering},
			notes: []inspect.Code{inspect.CodeNoOperationSpan},
			roots: []tracefixture.Span{
				// Ids made per call inside the retry wrapper, no operation span.
				{Name: "GET /report", Kind: trace.SpanKindServer, End: ms(300), Children: children(
					try{opID: "op-r1", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
					try{opID: "op-r2", n: 2, method: "GET", url: items, status: 200, start: 120, elapsed: 50, remaining: 280, decision: attrs.DecisionReturn}.span(),
				)},
			}},
		{name: "operation-id-reused", want: []inspect.Code{inspect.CodeOperationIDReused, inspect.CodeDuplicateRequestID}, roots: []tracefixture.Span{
			op{id: "op-fixed", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 51, children: children(
				try{opID: "op-fixed", n: 1, method: "GET", url: items, status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn}.span())}.span(),
			op{id: "op-fixed", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, start: 1000, end: 1051, children: children(
				try{opID: "op-fixed", n: 1, method: "GET", url: items, status: 200, start: 1000, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn}.span())}.span(),
		}},
		{name: "duplicate-delivery", want: []inspect.Code{inspect.CodeDuplicateRequestID}, roots: []tracefixture.Span{
			op{id: "op-twice", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 51, children: children(
				try{opID: "op-twice", n: 1, method: "GET", url: items, status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn, repeat: 1}.span())}.span(),
		}},
		{name: "duplicate-request-id", want: []inspect.Code{inspect.CodeDuplicateRequestID}, roots: []tracefixture.Span{
			op{id: "op-same", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, end: 200, children: children(
				try{opID: "op-same", requestID: "op-same/request", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-same", requestID: "op-same/request", n: 2, method: "GET", url: items, status: 200, start: 120, elapsed: 50, remaining: 280, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "unsafe-resend", json: true, want: []inspect.Code{inspect.CodeUnsafeResend}, roots: []tracefixture.Span{
			op{id: "op-post-timeout", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, end: 300, children: children(
				try{opID: "op-post-timeout", n: 1, method: "POST", url: orders, class: attrs.ErrorClassTimeout, elapsed: 120, remaining: 1000, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-post-timeout", n: 2, method: "POST", url: orders, status: 201, start: 160, elapsed: 40, remaining: 840, decision: attrs.DecisionReturn}.span(),
			)}.span(),
			// A state check that answered unknown does not allow a resend.
			op{id: "op-put-503", method: "PUT", url: endpoint("/orders/7"), outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 1000, end: 1200, children: children(
				try{opID: "op-put-503", n: 1, method: "PUT", url: endpoint("/orders/7"), status: 503, start: 1000, elapsed: 60, remaining: 1000, decision: attrs.DecisionRetry, backoff: 40}.span(),
				stateCheck("op-put-503", 0, attrs.StateUnknown, 1070, 1080),
				try{opID: "op-put-503", n: 2, method: "PUT", url: endpoint("/orders/7"), status: 200, start: 1100, elapsed: 40, remaining: 900, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "unredacted-url", want: []inspect.Code{inspect.CodeUnredactedURL}, roots: []tracefixture.Span{
			op{id: "op-leak", method: "GET", url: "http://alice:s3cret@" + server + "/items?token=abc123&page=REDACTED",
				outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 51, children: children(
					try{opID: "op-leak", n: 1, method: "GET", url: endpoint("/items?token=abc123&page=2"), status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn,
						clientAttrs: []attribute.KeyValue{semconv120.HTTPURLKey.String("http://REDACTED:REDACTED@" + server + "/items?token=abc123")},
						serverAttrs: []attribute.KeyValue{semconv.URLQueryKey.String("token=abc123&page=2"), semconv120.HTTPTargetKey.String("/items?page=REDACTED")},
					}.span())}.span(),
		}},
		{name: "attempt-after-deadline", want: []inspect.Code{inspect.CodeAttemptAfterDeadline}, roots: []tracefixture.Span{
			op{id: "op-overrun", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 200, end: 300, children: children(
				try{opID: "op-overrun", n: 1, method: "GET", url: items, status: 503, elapsed: 150, remaining: 200, decision: attrs.DecisionRetry, backoff: 90}.span(),
				try{opID: "op-overrun", n: 2, method: "GET", url: items, status: 200, start: 240, elapsed: 50, remaining: -40, decision: attrs.DecisionReturn}.span(),
			)}.span(),
			// Not a finding: retry.remaining_ms is whole milliseconds, cut, so
			// 0 is under 1 ms left, which the transport starts a call with.
			op{id: "op-zero", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 200, start: 1000, end: 1250, children: children(
				try{opID: "op-zero", n: 1, method: "GET", url: items, status: 503, start: 1000, elapsed: 160, remaining: 200, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-zero", n: 2, method: "GET", url: items, status: 200, start: 1200, elapsed: 50, remaining: 0, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "lost-attempt", want: []inspect.Code{inspect.CodeAttemptNumbering, inspect.CodeAttemptCountMismatch}, roots: []tracefixture.Span{
			op{id: "op-gap", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 3, budget: 400, end: 290, children: children(
				try{opID: "op-gap", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-gap", n: 3, method: "GET", url: items, status: 200, start: 240, elapsed: 50, remaining: 160, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "missing-operation-span", want: []inspect.Code{inspect.CodeMissingOperationSpan}, roots: []tracefixture.Span{
			op{id: "op-unsampled", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 400, end: 200, omit: true, children: children(
				try{opID: "op-unsampled", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 400, decision: attrs.DecisionRetry, backoff: 40}.span(),
				try{opID: "op-unsampled", n: 2, method: "GET", url: items, status: 200, start: 120, elapsed: 50, remaining: 280, decision: attrs.DecisionReturn}.span(),
			)}.span(),
		}},
		{name: "attempt-in-other-trace", want: []inspect.Code{inspect.CodeMissingOperationSpan, inspect.CodeAttemptCountMismatch}, roots: []tracefixture.Span{
			// The attempt started a new trace instead of joining the operation's.
			op{id: "op-detached", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 60}.span(),
			try{opID: "op-detached", n: 1, method: "GET", url: items, status: 200, start: 1, elapsed: 50, remaining: 399, decision: attrs.DecisionReturn}.span(),
		}},
		{name: "contract-attributes", want: []inspect.Code{inspect.CodeMissingAttribute, inspect.CodeInvalidAttribute},
			notes: []inspect.Code{inspect.CodeMissingOptionalAttribute}, roots: []tracefixture.Span{
				op{id: "op-sloppy", method: "POST", url: orders, outcome: "ok", attempts: 1, budget: 400, end: 200,
					drop: []attribute.Key{attrs.DeadlineMsKey, attrs.ServerAddressKey}, children: children(
						try{opID: "op-sloppy", n: 1, method: "POST", url: orders, class: attrs.ErrorClassTimeout, elapsed: 120, remaining: 400, decision: "give_up",
							drop:  []attribute.Key{attrs.RequestIDKey, attrs.RemainingMsKey},
							extra: []attribute.KeyValue{attrs.ElapsedMsKey.String("120ms")}}.span(),
						stateCheck("op-sloppy", -1, "maybe", 130, 140),
					)}.span(),
			}},
		{name: "clean-client-spans", roots: []tracefixture.Span{readTimelineClientSpans()}},
		{name: "minimal-contract", json: true, notes: []inspect.Code{inspect.CodeMissingOptionalAttribute, inspect.CodeNoOperationSpan},
			roots: minimalContract()},
		{name: "outer-layer-resend", json: true, want: []inspect.Code{inspect.CodeOuterLayerResend}, roots: outerLayerResends()},
		{name: "outer-layer-clean", roots: outerLayerClean()},
		{name: "outer-layer-loop", want: []inspect.Code{inspect.CodeOuterLayerResend}, roots: outerLayerLoop()},
		{name: "idempotency-key", json: true, roots: generatedKeys()},
		{name: "idempotency-key-invalid", want: []inspect.Code{inspect.CodeInvalidAttribute}, roots: []tracefixture.Span{
			op{id: "op-odd-key", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, end: 41,
				extra: []attribute.KeyValue{attrs.IdempotencyKeySourceKey.String("borrowed")}, children: children(
					try{client: true, opID: "op-odd-key", n: 1, method: "POST", url: orders, status: 201, elapsed: 40, remaining: 1000,
						decision: attrs.DecisionReturn, reason: attrs.ReasonResponse,
						extra: []attribute.KeyValue{attrs.IdempotencyReplayedKey.String("yes")}}.span())}.span(),
		}},
		{name: "hedged", json: true, roots: hedgedReads()},
		{name: "unsafe-hedge", want: []inspect.Code{inspect.CodeUnsafeHedge}, roots: unsafeHedges()},
		{name: "in-flight-alone", want: []inspect.Code{inspect.CodeRetryWithoutNext}, roots: []tracefixture.Span{
			// A retry left to another attempt in flight (in_flight),
			// with no other attempt at all.
			op{id: "op-alone", method: "GET", url: items, outcome: attrs.OutcomeMaxAttempts, attempts: 1, budget: 1000, end: 81, children: children(
				try{opID: "op-alone", n: 1, method: "GET", url: items, status: 503, elapsed: 80, remaining: 1000,
					decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}.span(),
			)}.span(),
		}},
		{name: "span-id-reused", want: []inspect.Code{inspect.CodeSpanIDReused}, roots: []tracefixture.Span{
			op{id: "op-twin", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 51, children: children(
				try{opID: "op-twin", n: 1, method: "GET", url: items, status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn,
					tamper: []attribute.KeyValue{attrs.OperationIDKey.String("op-twin"), attrs.AttemptKey.Int(1), attrs.DecisionKey.String("retry")}}.span())}.span(),
		}},
	}
}

// readTimelineClientSpans is readTimeline in the span shape of v0.2: each
// attempt is otelhttp's CLIENT span "GET" carrying the attempt event with
// its retry.reason, and the operation's time limit is written under its
// old name retry.budget_ms, which readers still accept.
func readTimelineClientSpans() tracefixture.Span {
	url := endpoint("/items")
	return op{id: "op-read-v2", method: "GET", url: url, outcome: attrs.OutcomeReturn, attempts: 3, budget: 400, legacyBudget: true, start: 0, end: 290,
		children: children(
			try{client: true, opID: "op-read-v2", n: 1, method: "GET", url: url, status: 503, start: 0, elapsed: 80, remaining: 400,
				decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus, backoff: 40}.span(),
			try{client: true, opID: "op-read-v2", n: 2, method: "GET", url: url, status: 503, start: 120, elapsed: 80, remaining: 280,
				decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus, backoff: 40}.span(),
			try{client: true, opID: "op-read-v2", n: 3, method: "GET", url: url, status: 200, start: 240, elapsed: 50, remaining: 160,
				decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span(),
		)}.span()
}

// minimalContract is what another team's retry layer may record: the
// minimal attempt event only (operation id, request id, attempt, method,
// status XOR error class, elapsed, remaining, decision). One operation has
// no operation span at all; the other has one with only its id and
// outcome. Neither shows a pattern of the diagnostic matrix: the absences
// are notes, and the run exits 0.
func minimalContract() []tracefixture.Span {
	minimal := []attribute.Key{attrs.ServerAddressKey}
	items := endpoint("/items")
	return []tracefixture.Span{
		{Name: "GET /report", Kind: trace.SpanKindServer, End: ms(300), Children: children(
			try{client: true, opID: "team-b-1", n: 1, method: "GET", url: items, class: attrs.ErrorClassTimeout, elapsed: 100, remaining: 1000,
				decision: attrs.DecisionRetry, drop: []attribute.Key{attrs.BackoffMsKey, attrs.ServerAddressKey, attrs.ErrorTypeKey}}.span(),
			try{client: true, opID: "team-b-1", n: 2, method: "GET", url: items, status: 200, start: 150, elapsed: 40, remaining: 850,
				decision: attrs.DecisionReturn, drop: minimal}.span(),
		)},
		op{id: "team-b-2", method: "POST", url: endpoint("/orders"), outcome: attrs.OutcomeReturn, start: 1000, end: 1050,
			drop: []attribute.Key{attrs.HTTPRequestMethodKey, attrs.URLFullKey, attrs.ServerAddressKey, attrs.AttemptsKey, attrs.DeadlineMsKey},
			children: children(
				try{client: true, opID: "team-b-2", n: 1, method: "POST", url: endpoint("/orders"), status: 201, start: 1000, elapsed: 40, remaining: 500,
					decision: attrs.DecisionReturn, drop: minimal}.span(),
			)}.span(),
	}
}

// outerLayerResends are writes sent again by a layer above the retry
// transport, as go-retryablehttp stacked over it does: with a fresh
// operation id per call (sibling operation spans under the caller's span),
// with one shared operation id that the transport marks as a repeat, and
// marked where the earlier operation is not in the input.
func outerLayerResends() []tracefixture.Span {
	orders, pay := endpoint("/orders"), endpoint("/payments")
	return []tracefixture.Span{
		// Fresh ids: the POST ended with a 503 that the transport did not
		// retry (not idempotent); the outer layer sent it again.
		{Name: "POST /checkout", Kind: trace.SpanKindServer, End: ms(400), Children: children(
			op{id: "op-o1", method: "POST", url: orders, outcome: attrs.OutcomeStop, attempts: 1, budget: 1000, start: 0, end: 61, children: children(
				try{client: true, opID: "op-o1", n: 1, method: "POST", url: orders, status: 503, elapsed: 60, remaining: 1000,
					decision: attrs.DecisionStop, reason: attrs.ReasonNotIdempotent}.span())}.span(),
			op{id: "op-o2", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 100, end: 141, children: children(
				try{client: true, opID: "op-o2", n: 1, method: "POST", url: orders, status: 201, start: 100, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
		// One id (WithOperationID): the transport counts the second
		// operation as a repeat of the first, after an unknown outcome.
		{Name: "POST /pay", Kind: trace.SpanKindServer, Start: ms(1000), End: ms(1400), Children: children(
			op{id: "op-pay", method: "POST", url: pay, outcome: attrs.OutcomeCheckState, attempts: 1, budget: 1000, start: 1000, end: 1121, children: children(
				try{client: true, opID: "op-pay", n: 1, method: "POST", url: pay, class: attrs.ErrorClassTimeout, start: 1000, elapsed: 120, remaining: 1000,
					decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite}.span())}.span(),
			op{id: "op-pay", method: "POST", url: pay, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, repeat: 1, start: 1200, end: 1241, children: children(
				try{client: true, opID: "op-pay", requestID: "op-pay/repeat-1/attempt-1", n: 1, method: "POST", url: pay, status: 200, start: 1200, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
		// The marker alone: the earlier operations are not in the input.
		op{id: "op-marked", method: "PUT", url: endpoint("/orders/7"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, repeat: 2, start: 2000, end: 2041,
			children: children(
				try{client: true, opID: "op-marked", n: 1, method: "PUT", url: endpoint("/orders/7"), status: 200, start: 2000, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
	}
}

// outerLayerClean are repeated operations that outer-layer-resend must let
// pass: the hops of a 307 redirect chain of a POST (retry.redirects), with
// a shared and with fresh operation ids; a GET sent again after a 503; a
// second POST after the first succeeded (a deliberate second call); a
// POST with an idempotency contract; and POSTs made at once (a fan-out),
// the first of which failed.
func outerLayerClean() []tracefixture.Span {
	orders, items := endpoint("/orders"), endpoint("/items")
	redirectHop := func(id string, hop, n, start int64, status int64) op {
		o := op{id: id, method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, redirects: hop, start: start, end: start + 41,
			children: children(try{client: true, opID: id, n: n, method: "POST", url: orders, status: status, start: start, elapsed: 40, remaining: 1000 - (start % 1000),
				decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}
		return o
	}
	return []tracefixture.Span{
		// WithOperationID: the hops share the id and go on counting attempts.
		{Name: "POST /submit", Kind: trace.SpanKindServer, End: ms(200), Children: children(
			redirectHop("op-redirect", 0, 1, 0, 307).span(),
			redirectHop("op-redirect", 1, 2, 50, 201).span(),
		)},
		// Fresh ids per hop.
		{Name: "POST /submit", Kind: trace.SpanKindServer, Start: ms(1000), End: ms(1200), Children: children(
			redirectHop("op-hop-1", 0, 1, 1000, 308).span(),
			redirectHop("op-hop-2", 1, 2, 1050, 201).span(),
		)},
		// A GET repeated after a 503: safe to repeat.
		{Name: "GET /page", Kind: trace.SpanKindServer, Start: ms(2000), End: ms(2300), Children: children(
			op{id: "op-g1", method: "GET", url: items, outcome: attrs.OutcomeMaxAttempts, attempts: 1, budget: 1000, start: 2000, end: 2061, children: children(
				try{client: true, opID: "op-g1", n: 1, method: "GET", url: items, status: 503, start: 2000, elapsed: 60, remaining: 1000,
					decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}.span())}.span(),
			op{id: "op-g2", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, repeat: 1, start: 2100, end: 2141, children: children(
				try{client: true, opID: "op-g2", n: 1, method: "GET", url: items, status: 200, start: 2100, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
		// Two orders on purpose: the first succeeded.
		{Name: "POST /cart/checkout", Kind: trace.SpanKindServer, Start: ms(3000), End: ms(3300), Children: children(
			op{id: "op-c1", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 3000, end: 3041, children: children(
				try{client: true, opID: "op-c1", n: 1, method: "POST", url: orders, status: 201, start: 3000, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
			op{id: "op-c2", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, repeat: 1, start: 3100, end: 3141, children: children(
				try{client: true, opID: "op-c2", n: 1, method: "POST", url: orders, status: 201, start: 3100, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
		// A fan-out: creates made at once under one handler, the first of
		// which failed while the others were in flight. None began after
		// it ended, so none repeats it (the transport marks none either).
		{Name: "POST /ingest", Kind: trace.SpanKindServer, Start: ms(5000), End: ms(5300), Children: children(
			op{id: "op-f1", method: "POST", url: orders, outcome: attrs.OutcomeStop, attempts: 1, budget: 1000, start: 5000, end: 5051, children: children(
				try{client: true, opID: "op-f1", n: 1, method: "POST", url: orders, status: 500, start: 5000, elapsed: 50, remaining: 1000,
					decision: attrs.DecisionStop, reason: attrs.ReasonStatus}.span())}.span(),
			op{id: "op-f2", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 5002, end: 5201, children: children(
				try{client: true, opID: "op-f2", n: 1, method: "POST", url: orders, status: 201, start: 5002, elapsed: 198, remaining: 998,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
		// An idempotency contract makes the repeat legitimate.
		{Name: "POST /pay", Kind: trace.SpanKindServer, Start: ms(4000), End: ms(4300), Children: children(
			op{id: "op-k1", method: "POST", url: endpoint("/payments"), outcome: attrs.OutcomeStop, attempts: 1, budget: 1000, contract: true, start: 4000, end: 4061, children: children(
				try{client: true, opID: "op-k1", n: 1, method: "POST", url: endpoint("/payments"), status: 500, start: 4000, elapsed: 60, remaining: 1000,
					decision: attrs.DecisionStop, reason: attrs.ReasonStatus}.span())}.span(),
			op{id: "op-k2", method: "POST", url: endpoint("/payments"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, contract: true, repeat: 1, start: 4100, end: 4141, children: children(
				try{client: true, opID: "op-k2", n: 1, method: "POST", url: endpoint("/payments"), status: 200, start: 4100, elapsed: 40, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		)},
	}
}

// generatedKeys are writes under an idempotency key otelretry generated
// (retry.idempotency_key.source, written here without
// retry.idempotency_contract, as another implementation may): resent after
// a timeout, retried after a 409 while the key was in progress, and
// answered from the server's store (replayed); and sent again by an
// application loop under the same operation id and key. None is unsafe.
func generatedKeys() []tracefixture.Span {
	orders, pay := endpoint("/orders"), endpoint("/charges")
	generated := []attribute.KeyValue{attrs.KeySourceGenerated.Attribute()}
	replayed := append([]attribute.KeyValue{attrs.IdempotencyReplayedKey.Bool(true)}, generated...)
	return []tracefixture.Span{
		op{id: "op-keyed", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 3, budget: 1000, end: 400, extra: generated, children: children(
			try{client: true, opID: "op-keyed", n: 1, method: "POST", url: orders, class: attrs.ErrorClassTimeout, elapsed: 100, remaining: 1000,
				decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableError, backoff: 40, extra: generated}.span(),
			try{client: true, opID: "op-keyed", n: 2, method: "POST", url: orders, status: 409, start: 140, elapsed: 10, remaining: 860, retryAfter: 100,
				decision: attrs.DecisionRetry, reason: attrs.ReasonKeyInProgress, backoff: 100, extra: generated}.span(),
			try{client: true, opID: "op-keyed", n: 3, method: "POST", url: orders, status: 201, start: 250, elapsed: 10, remaining: 750,
				decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, extra: replayed}.span(),
		)}.span(),
		op{id: "job-1", method: "POST", url: pay, outcome: attrs.OutcomeMaxAttempts, attempts: 1, budget: 400, start: 1000, end: 1121, extra: generated, children: children(
			try{client: true, opID: "job-1", n: 1, method: "POST", url: pay, class: attrs.ErrorClassConnectionReset, start: 1000, elapsed: 120, remaining: 400,
				decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit, extra: generated}.span())}.span(),
		op{id: "job-1", method: "POST", url: pay, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, repeat: 1, start: 1300, end: 1341, extra: generated, children: children(
			try{client: true, opID: "job-1", requestID: "job-1/attempt-2", n: 2, method: "POST", url: pay, status: 201, start: 1300, elapsed: 40, remaining: 400,
				decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, extra: replayed}.span())}.span(),
	}
}

// outerLayerLoop is an application loop without a span of its own that
// sends a POST under one operation id (WithOperationID), gets check_state,
// and sends it again: each call is a root operation span in a trace of its
// own, and the transport marks the second as a repeat of the first.
func outerLayerLoop() []tracefixture.Span {
	pay := endpoint("/charges")
	return []tracefixture.Span{
		op{id: "op-loop", method: "POST", url: pay, outcome: attrs.OutcomeCheckState, attempts: 1, budget: 400, start: 0, end: 121, children: children(
			try{client: true, opID: "op-loop", n: 1, method: "POST", url: pay, class: attrs.ErrorClassTimeout, elapsed: 120, remaining: 400,
				decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite}.span())}.span(),
		op{id: "op-loop", method: "POST", url: pay, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, repeat: 1, start: 300, end: 341, children: children(
			try{client: true, opID: "op-loop", requestID: "op-loop/attempt-2", n: 2, method: "POST", url: pay, status: 201, start: 300, elapsed: 40, remaining: 400,
				decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
	}
}

// hedgedReads are hedged operations as otelretry's WithHedging records
// them (hedge delay 50 ms), all clean: a hedge that wins (the attempt it
// hedged is superseded), an attempt that wins over its hedge, a retryable
// failure while the hedge is in flight (retry, reason in_flight, no
// pause), two rounds (both attempts fail, the retry is hedged again), a
// hedge refused by the dependency's hedge rate and a read that answered
// before the delay; another implementation's hedge; a POST declared
// repeatable, hedged; and a write whose hedge was refused
// (not_idempotent).
func hedgedReads() []tracefixture.Span {
	items, search, orders := endpoint("/items"), endpoint("/search"), endpoint("/orders")
	get := func(id string, n, start, elapsed, remaining int64, status int64, class attrs.ErrorClass, d attrs.Decision, r attrs.Reason) try {
		return try{client: true, opID: id, n: n, method: "GET", url: items, status: status, class: class, start: start, elapsed: elapsed,
			remaining: remaining, decision: d, reason: r}
	}
	with := func(t try, of, after int64) try {
		t.hedgeOf, t.hedgedAfter = of, after
		return t
	}
	return []tracefixture.Span{
		op{id: "op-hedge-won", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 0, end: 91,
			events: []tracefixture.Event{hedgeSent(50, 2, 1, 50)}, children: children(
				with(get("op-hedge-won", 1, 0, 91, 1000, 0, attrs.ErrorClassCanceled, attrs.DecisionSuperseded, attrs.ReasonOtherAttempt), 0, 50).span(),
				with(get("op-hedge-won", 2, 50, 40, 950, 200, "", attrs.DecisionReturn, attrs.ReasonResponse), 1, 0).span(),
			)}.span(),
		op{id: "op-first-won", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 1000, end: 1071,
			events: []tracefixture.Event{hedgeSent(1050, 2, 1, 50)}, children: children(
				with(get("op-first-won", 1, 1000, 70, 1000, 200, "", attrs.DecisionReturn, attrs.ReasonResponse), 0, 50).span(),
				with(get("op-first-won", 2, 1050, 21, 950, 0, attrs.ErrorClassCanceled, attrs.DecisionSuperseded, attrs.ReasonOtherAttempt), 1, 0).span(),
			)}.span(),
		op{id: "op-in-flight", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 2000, end: 2111,
			events: []tracefixture.Event{hedgeSent(2050, 2, 1, 50)}, children: children(
				with(get("op-in-flight", 1, 2000, 80, 1000, 503, "", attrs.DecisionRetry, attrs.ReasonInFlight), 0, 50).span(),
				with(get("op-in-flight", 2, 2050, 60, 950, 200, "", attrs.DecisionReturn, attrs.ReasonResponse), 1, 0).span(),
			)}.span(),
		op{id: "op-two-rounds", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 4, budget: 1000, start: 3000, end: 3261,
			events: []tracefixture.Event{hedgeSent(3050, 2, 1, 50), hedgeSent(3240, 4, 3, 50)}, children: children(
				with(get("op-two-rounds", 1, 3000, 100, 1000, 503, "", attrs.DecisionRetry, attrs.ReasonInFlight), 0, 50).span(),
				func() tracefixture.Span {
					t := with(get("op-two-rounds", 2, 3050, 100, 950, 503, "", attrs.DecisionRetry, attrs.ReasonRetryableStatus), 1, 0)
					t.backoff = 40
					return t.span()
				}(),
				with(get("op-two-rounds", 3, 3190, 70, 810, 200, "", attrs.DecisionReturn, attrs.ReasonResponse), 0, 50).span(),
				with(get("op-two-rounds", 4, 3240, 21, 760, 0, attrs.ErrorClassCanceled, attrs.DecisionSuperseded, attrs.ReasonOtherAttempt), 3, 0).span(),
			)}.span(),
		op{id: "op-rate-limited", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 4000, end: 4121,
			events: []tracefixture.Event{hedgeRefused(4050, 1, 50, attrs.ReasonHedgeLimit)}, children: children(
				get("op-rate-limited", 1, 4000, 120, 1000, 200, "", attrs.DecisionReturn, attrs.ReasonResponse).span(),
			)}.span(),
		op{id: "op-quick", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 5000, end: 5031, children: children(
			get("op-quick", 1, 5000, 30, 1000, 200, "", attrs.DecisionReturn, attrs.ReasonResponse).span(),
		)}.span(),
		// A search sent as POST, declared repeatable (Intent.Repeatable).
		op{id: "op-search", method: "POST", url: search, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, contract: true, start: 6000, end: 6091,
			events: []tracefixture.Event{hedgeSent(6050, 2, 1, 50)}, children: children(
				try{client: true, opID: "op-search", n: 1, method: "POST", url: search, class: attrs.ErrorClassCanceled, start: 6000, elapsed: 91, remaining: 1000,
					decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt, hedgedAfter: 50}.span(),
				try{client: true, opID: "op-search", n: 2, method: "POST", url: search, status: 200, start: 6050, elapsed: 40, remaining: 950,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, hedgeOf: 1}.span(),
			)}.span(),
		// Another implementation's hedge, which records neither
		// retry.hedge.of nor in_flight: its 503 came while the first
		// attempt was in flight, and the first attempt answered.
		op{id: "op-other-hedger", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 8000, end: 8101, children: children(
			try{client: true, opID: "op-other-hedger", n: 1, method: "GET", url: items, status: 200, start: 8000, elapsed: 100, remaining: 1000,
				decision: attrs.DecisionReturn}.span(),
			try{client: true, opID: "op-other-hedger", n: 2, method: "GET", url: items, status: 503, start: 8040, elapsed: 20, remaining: 960,
				decision: attrs.DecisionRetry, backoff: 40}.span(),
		)}.span(),
		op{id: "op-order", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000, start: 7000, end: 7081,
			events: []tracefixture.Event{hedgeRefused(7050, 1, 50, attrs.ReasonNotIdempotent)}, children: children(
				try{client: true, opID: "op-order", n: 1, method: "POST", url: orders, status: 201, start: 7000, elapsed: 80, remaining: 1000,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span(),
			)}.span(),
	}
}

// unsafeHedges are writes hedged without an idempotency contract: a POST
// whose hedge records retry.hedge.of, and a PUT from another
// implementation whose second attempt only overlaps the first in time.
func unsafeHedges() []tracefixture.Span {
	orders, order := endpoint("/orders"), endpoint("/orders/7")
	key := []attribute.KeyValue{attrs.KeySourceGenerated.Attribute()}
	return []tracefixture.Span{
		op{id: "op-post-hedged", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 0, end: 91,
			events: []tracefixture.Event{hedgeSent(50, 2, 1, 50)}, children: children(
				try{client: true, opID: "op-post-hedged", n: 1, method: "POST", url: orders, class: attrs.ErrorClassCanceled, elapsed: 91, remaining: 1000,
					decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt, hedgedAfter: 50}.span(),
				try{client: true, opID: "op-post-hedged", n: 2, method: "POST", url: orders, status: 201, start: 50, elapsed: 40, remaining: 950,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, hedgeOf: 1}.span(),
			)}.span(),
		op{id: "op-put-overlap", method: "PUT", url: order, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 1000, end: 1101, children: children(
			try{client: true, opID: "op-put-overlap", n: 1, method: "PUT", url: order, status: 200, start: 1000, elapsed: 100, remaining: 1000,
				decision: attrs.DecisionReturn}.span(),
			try{client: true, opID: "op-put-overlap", n: 2, method: "PUT", url: order, class: attrs.ErrorClassCanceled, start: 1040, elapsed: 61, remaining: 960,
				decision: attrs.DecisionSuperseded}.span(),
		)}.span(),
		// A key alone, which excuses a resend, does not excuse a hedge.
		op{id: "op-post-keyed-hedged", method: "POST", url: orders, outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000, start: 2000, end: 2091,
			extra: key, events: []tracefixture.Event{hedgeSent(2050, 2, 1, 50)}, children: children(
				try{client: true, opID: "op-post-keyed-hedged", n: 1, method: "POST", url: orders, class: attrs.ErrorClassCanceled, start: 2000, elapsed: 91,
					remaining: 1000, decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt, hedgedAfter: 50, extra: key}.span(),
				try{client: true, opID: "op-post-keyed-hedged", n: 2, method: "POST", url: orders, status: 201, start: 2050, elapsed: 40, remaining: 950,
					decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, hedgeOf: 1, extra: key}.span(),
			)}.span(),
	}
}
