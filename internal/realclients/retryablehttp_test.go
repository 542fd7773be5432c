// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

var update = flag.Bool("update", false, "rewrite the trace captures in testdata/")

// go-retryablehttp's defaults: RetryMax 4, so five tries per call, each a
// whole otelretry operation.
const outerTries = 5

// outerLayer is go-retryablehttp with its default retry policy and
// RetryMax, stacked over rt; only its waits are shortened (1s..30s by
// default) and its logger silenced.
func outerLayer(rt http.RoundTripper) *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: rt}
	c.Logger = nil
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, time.Millisecond
	return c
}

// callContext is how the caller ties the calls of one logical operation
// together, if at all: an operation id (otelretry.WithOperationID), a span
// around the call, both or neither.
type callContext struct {
	name   string
	opID   bool
	parent bool
}

var (
	underParent  = callContext{name: "parent_span", parent: true}
	callContexts = []callContext{
		{name: "operation_id", opID: true},
		underParent,
		{name: "operation_id_and_parent_span", opID: true, parent: true},
		{name: "neither"},
	}
)

// marked reports whether otelretry can count the outer layer's repeats:
// it needs something in the context that outlives one RoundTrip.
func (c callContext) marked() bool { return c.opID || c.parent }

// call makes one go-retryablehttp call with ctx under c and returns its result once
// the caller's span, if any, has ended.
func (c callContext) call(ctx context.Context, tel *telemetry, client *retryablehttp.Client, method, url string, body []byte) (*http.Response, error) {
	if c.opID {
		ctx = otelretry.WithOperationID(ctx, "op-order-42")
	}
	var span trace.Span
	if c.parent {
		ctx, span = tel.parent(ctx)
		defer span.End()
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}

// repeat is the retry.operation.repeat the k-th operation (from 0) of a
// stacked call must carry under c: k, from the second on, when otelretry
// can tell.
func (c callContext) repeat(k int) int {
	if !c.marked() {
		return 0
	}
	return k
}

// checkTraces checks how the operations of one stacked call are joined:
// one trace under a parent span, else one trace per operation (the
// operation span is the root); with an operation id, all share it.
func (c callContext) checkTraces(t *testing.T, ops []op) {
	t.Helper()
	want := len(ops)
	if c.parent {
		want = 1
	}
	if got := len(traceIDs(ops)); got != want {
		t.Errorf("%d operations in %d traces, want %d", len(ops), got, want)
	}
	for _, o := range ops {
		if id := str(o.span, attrs.OperationIDKey); c.opID && id != "op-order-42" {
			t.Errorf("operation id %q, want op-order-42", id)
		}
	}
	if !c.opID && len(ops) > 1 && str(ops[0].span, attrs.OperationIDKey) == str(ops[1].span, attrs.OperationIDKey) {
		t.Errorf("operations without WithOperationID share the generated id %q", str(ops[0].span, attrs.OperationIDKey))
	}
}

// TestRetryablehttpGET503 stacks go-retryablehttp (five tries) over
// otelretry (three attempts) against a server that always answers 503.
// otelretry returns the last 503 it received, go-retryablehttp's default
// policy retries any 5xx but 501, so each of its tries is a whole otelretry
// operation: the attempts multiply. Without a retry budget the server
// receives 5 × 3 = 15 GETs; with otelretry's default budget (6 tokens per
// host, a retry needs more than 3) the first operation spends three tokens
// and every later one is a single attempt ended budget_exhausted:
// 3 + 4 × 1 = 7.
func TestRetryablehttpGET503(t *testing.T) {
	for _, budget := range []struct {
		name     string
		opts     []otelretry.Option
		received int
		later    wantOp // the 2nd to 5th operations
	}{
		{
			name: "without_budget", opts: []otelretry.Option{otelretry.WithoutBudget()},
			received: outerTries * 3,
			later: wantOp{outcome: attrs.OutcomeMaxAttempts, attempts: []wantAttempt{
				{status: 503, decision: attrs.DecisionRetry}, {status: 503, decision: attrs.DecisionRetry},
				{status: 503, decision: attrs.DecisionMaxAttempts}}},
		},
		{
			name: "default_budget", received: 3 + (outerTries-1)*1,
			later: wantOp{outcome: attrs.OutcomeBudgetExhausted, attempts: []wantAttempt{
				{status: 503, decision: attrs.DecisionBudgetExhausted}}},
		},
	} {
		for _, cc := range callContexts {
			t.Run(budget.name+"/"+cc.name, func(t *testing.T) {
				tel := newTelemetry(t)
				srv := newServer(t, tel, statuses(http.StatusServiceUnavailable))
				rt := tel.transport(t, append([]otelretry.Option{
					otelretry.WithMaxAttempts(3),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
				}, budget.opts...)...)

				resp, err := cc.call(context.Background(), tel, outerLayer(rt), http.MethodGet, srv.URL+"/items/42", nil)
				if err == nil || resp != nil {
					t.Fatalf("go-retryablehttp over an always-503 server: response %v, error %v; want its giving-up error", resp, err)
				}
				spans := tel.finished(srv)
				if got := srv.received.Load(); got != int64(budget.received) {
					t.Errorf("server received %d GETs, want %d", got, budget.received)
				}
				ops := operations(t, spans)
				if len(ops) != outerTries {
					t.Fatalf("%d operation spans, want %d (one per go-retryablehttp try)", len(ops), outerTries)
				}
				ops[0].check(t, spans, wantOp{method: http.MethodGet, outcome: attrs.OutcomeMaxAttempts, attempts: []wantAttempt{
					{status: 503, decision: attrs.DecisionRetry}, {status: 503, decision: attrs.DecisionRetry},
					{status: 503, decision: attrs.DecisionMaxAttempts}}})
				for k := 1; k < len(ops); k++ {
					want := budget.later
					want.method, want.repeat = http.MethodGet, cc.repeat(k)
					ops[k].check(t, spans, want)
				}
				cc.checkTraces(t, ops)
				for k, o := range ops {
					// Each try of the outer layer is an operation with a
					// deadline of its own: the default 30s, five times over.
					if d, _ := num(o.span, attrs.DeadlineMsKey); d != 30000 {
						t.Errorf("operation %d: %s=%d, want 30000", k+1, attrs.DeadlineMsKey, d)
					}
				}

				// Repeating a GET is allowed: the inspector must not call it a
				// blind resend.
				path := filepath.Join(t.TempDir(), "trace.json")
				writeStdouttrace(t, path, spans)
				rep, code := inspect(t, path)
				if got := rep.without(tolerated(cc)...); len(got) > 0 || code != 0 && len(tolerated(cc)) == 0 {
					t.Errorf("retryinspect: exit %d, findings %v; want none for repeated GETs", code, rep.codes())
				}
			})
		}
	}
}

// TestRetryablehttpPOSTTimeout stacks go-retryablehttp over otelretry for a
// POST the server never answers. otelretry sends it once, its deadline
// (100ms) passes before the headers come, and it ends check_state with
// ErrOutcomeUnknown: it does not resend a write that may have been
// applied. go-retryablehttp's default policy retries any transport error,
// whatever the method, so it sends the POST again as four new operations:
// the server receives 5 POSTs. otelretry cannot stop the layer above it;
// it marks the 2nd to 5th operations with retry.operation.repeat = 1..4
// (when the context ties them together), and retryinspect reports each as
// outer-layer-resend.
func TestRetryablehttpPOSTTimeout(t *testing.T) {
	for _, cc := range callContexts {
		t.Run(cc.name, func(t *testing.T) {
			spans := stackedPOSTTimeout(t, cc)
			ops := operations(t, spans)
			if len(ops) != outerTries {
				t.Fatalf("%d operation spans, want %d", len(ops), outerTries)
			}
			for k, o := range ops {
				o.check(t, spans, wantOp{method: http.MethodPost, outcome: attrs.OutcomeCheckState, repeat: cc.repeat(k),
					attempts: []wantAttempt{{class: attrs.ErrorClassTimeout, decision: attrs.DecisionCheckState}}})
				// Written once per operation: net/http resent nothing below.
				if w, _ := num(o.attempts[0], attrs.WireWritesKey); w != 1 {
					t.Errorf("operation %d: %s=%d, want 1", k+1, attrs.WireWritesKey, w)
				}
			}
			cc.checkTraces(t, ops)

			path := filepath.Join(t.TempDir(), "trace.json")
			writeStdouttrace(t, path, spans)
			rep, code := inspect(t, path)
			want := 0
			if cc.marked() {
				want = outerTries - 1 // every repeat, none for the first
			}
			got := rep.without(tolerated(cc)...)
			if got[codeOuterLayerResend] != want || len(got) != min(want, 1) {
				t.Errorf("retryinspect: exit %d, findings %v; want %d %s and nothing else", code, rep.codes(), want, codeOuterLayerResend)
			}
			if want > 0 && code != 1 || len(rep.Findings) == 0 && code != 0 {
				t.Errorf("retryinspect: exit %d with %d findings", code, len(rep.Findings))
			}
			flagged := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Code == codeOuterLayerResend {
					flagged[f.SpanID] = true
				}
			}
			for k, o := range ops {
				if id := o.span.SpanContext().SpanID().String(); flagged[id] != (cc.marked() && k > 0) {
					t.Errorf("operation %d (span %s): flagged %v", k+1, id, flagged[id])
				}
			}
			if *update && cc.marked() {
				capture(t, "retryablehttp-post-timeout-"+cc.name+".json", spans)
			}
		})
	}
}

// stackedPOSTTimeout makes the POST of TestRetryablehttpPOSTTimeout under
// cc, checks what the caller and the server saw, and returns the spans.
func stackedPOSTTimeout(t *testing.T, cc callContext) []sdktrace.ReadOnlySpan {
	t.Helper()
	tel := newTelemetry(t)
	srv := newServer(t, tel, hang)
	rt := tel.transport(t, otelretry.WithDeadline(100*time.Millisecond))

	resp, err := cc.call(context.Background(), tel, outerLayer(rt), http.MethodPost, srv.URL+"/orders", []byte(`{"item":42}`))
	if resp != nil {
		resp.Body.Close()
		t.Fatalf("got a response (%d) from a server that never answers", resp.StatusCode)
	}
	// go-retryablehttp wraps the last error with %w: otelretry's *Error,
	// which says what otelretry did (one attempt, not resent by it).
	var oe *otelretry.Error
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.Attempts != 1 || oe.Outcome != attrs.OutcomeCheckState {
		t.Fatalf("error %v; want otelretry's check_state error after 1 attempt, matching ErrOutcomeUnknown", err)
	}
	spans := tel.finished(srv)
	if got := srv.received.Load(); got != outerTries {
		t.Errorf("server received %d POSTs, want %d (one per go-retryablehttp try)", got, outerTries)
	}
	return spans
}

// capture writes spans to testdata/name as stdouttrace JSON (go test -run
// TestRetryablehttpPOSTTimeout -update).
func capture(t *testing.T, name string, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	writeStdouttrace(t, filepath.Join("testdata", name), spans)
	t.Logf("wrote testdata/%s", name)
}

// TestCapturedTraces runs retryinspect on the captures in testdata/, so
// that they stay what testdata/README.md says they are.
func TestCapturedTraces(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "retryablehttp-post-timeout-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no capture in testdata/")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep, code := inspect(t, path)
			got := rep.codes()
			if code != 1 || got[codeOuterLayerResend] != outerTries-1 || len(got) != 1 {
				t.Errorf("exit %d, findings %v; want %d %s", code, got, outerTries-1, codeOuterLayerResend)
			}
			if rep.Spans.Operation != outerTries || rep.Spans.Attempt != outerTries {
				t.Errorf("%d operation and %d attempt spans, want %d of each", rep.Spans.Operation, rep.Spans.Attempt, outerTries)
			}
		})
	}
}
