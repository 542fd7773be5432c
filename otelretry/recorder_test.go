// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	lognoop "go.opentelemetry.io/otel/log/noop"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// channelScenario is one operation whose attempts end with the decisions
// and reasons of some rows of the decision table.
type channelScenario struct {
	name   string
	steps  []scripted.Step
	method string
	opts   []otelretry.Option
	// ctx shapes the caller's context: a cancellation, a deadline, an
	// intent.
	ctx func(context.Context) (context.Context, context.CancelFunc)
	// want is every attempt's decision/reason, in order.
	want []string
	// noGetBody: the body cannot be had again.
	noGetBody bool
}

func channelScenarios() []channelScenario {
	ms := time.Millisecond
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	intent := func(in otelretry.Intent) func(context.Context) (context.Context, context.CancelFunc) {
		return func(ctx context.Context) (context.Context, context.CancelFunc) {
			return otelretry.WithIntent(ctx, in), func() {}
		}
	}
	return []channelScenario{
		{name: "return", steps: []scripted.Step{{Status: 200}}, method: http.MethodGet, want: []string{"return/response"}},
		{name: "retryable status, then return", steps: []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"0"}}}, {Status: 200}},
			method: http.MethodGet, want: []string{"retry/retryable_status", "return/response"}},
		{name: "retryable error, then return", steps: []scripted.Step{{Delay: 5 * ms, Err: errBaseTimeout}, {Status: 204}},
			method: http.MethodGet, want: []string{"retry/retryable_error", "return/response"}},
		{name: "a write not processed, then return", steps: []scripted.Step{{Err: refused}, {Status: 201}},
			method: http.MethodPost, want: []string{"retry/not_processed", "return/response"}},
		{name: "attempt limit", steps: []scripted.Step{{Status: 503}}, method: http.MethodGet,
			want: []string{"retry/retryable_status", "retry/retryable_status", "max_attempts/attempt_limit"}},
		{name: "Retry-After past the deadline", steps: []scripted.Step{{Status: 429, Header: http.Header{"Retry-After": {"60"}}}},
			method: http.MethodGet, want: []string{"deadline_exceeded/deadline"}},
		{name: "a status not retried", steps: []scripted.Step{{Status: 500}}, method: http.MethodGet, want: []string{"stop/status"}},
		{name: "a write's retryable status", steps: []scripted.Step{{Status: 503}}, method: http.MethodPost, want: []string{"stop/not_idempotent"}},
		{name: "a write's timeout", steps: []scripted.Step{{Delay: 5 * ms, Err: errBaseTimeout}}, method: http.MethodPost,
			want: []string{"check_state/unknown_write"}},
		{name: "a method outside the standard set", steps: []scripted.Step{{Status: 200}}, method: "PURGE", want: []string{"return/response"}},
		{name: "the caller cancels", steps: []scripted.Step{{Hang: true}}, method: http.MethodGet,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(10*ms, cancel)
				return ctx, cancel
			}, want: []string{"canceled/caller"}},
		{name: "the caller's deadline", steps: []scripted.Step{{Hang: true}}, method: http.MethodPost,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 30*ms)
			},
			want: []string{"deadline_exceeded/caller"}},
		{name: "the budget", steps: []scripted.Step{{Status: 503}}, method: http.MethodGet,
			opts: []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Tokens: 2})},
			want: []string{"budget_exhausted/budget"}},
		{name: "a classifier", steps: []scripted.Step{{Status: 503}}, method: http.MethodGet,
			opts: []otelretry.Option{otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { return otelretry.NotRetryable() })},
			want: []string{"stop/classifier"}},
		{name: "an intent without retries", steps: []scripted.Step{{Status: 503}}, method: http.MethodGet,
			ctx: intent(otelretry.Intent{NoRetry: true}), want: []string{"stop/intent"}},
		{name: "a body that cannot be replayed", steps: []scripted.Step{{Status: 503}}, method: http.MethodPut,
			opts: []otelretry.Option{otelretry.WithBodyBuffer(0, 0)}, ctx: intent(otelretry.Intent{Repeatable: true}),
			noGetBody: true, want: []string{"stop/not_replayable"}},
	}
}

// The four channels an attempt is recorded on (its span, its retry.attempt
// log event, its slog record, the metrics) cannot disagree: for every row
// of the decision table, in both span modes, each carries the values the
// others carry for the fields they share. The attempt event is built once
// and recorded by one recorder; this holds it.
func TestChannelsAgreeOnEveryDecision(t *testing.T) {
	for _, sc := range channelScenarios() {
		for _, clientSpans := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clientSpans=%v", sc.name, clientSpans), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var slogBuf bytes.Buffer
					logs := &logRecorder{}
					lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(logs))
					defer lp.Shutdown(context.Background())
					opts := append([]otelretry.Option{otelretry.WithLoggerProvider(lp),
						otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))),
						otelretry.WithBackoff(otelretry.ConstantBackoff(ms)), otelretry.WithDeadline(time.Second)}, sc.opts...)
					if !clientSpans {
						opts = append(opts, otelretry.WithoutClientSpans())
					}
					h := newHarness(t, sc.steps, opts...)
					ctx, cancel := t.Context(), context.CancelFunc(func() {})
					if sc.ctx != nil {
						ctx, cancel = sc.ctx(ctx)
					}
					defer cancel()
					var body io.Reader
					switch {
					case sc.noGetBody:
						body = io.NopCloser(strings.NewReader("order"))
					case sc.method != http.MethodGet:
						body = strings.NewReader("order")
					}
					req, _ := http.NewRequestWithContext(ctx, sc.method, "http://api.test/items?key=SECRET", body)
					resp, err := h.transprt.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					checkChannelsAgree(t, h, logs, &slogBuf, sc.want)
				})
			})
		}
	}
}

const ms = time.Millisecond

// checkChannelsAgree holds the attempt spans, the retry.attempt records,
// the slog records and the retry metrics of one operation to one another,
// and to the decisions wanted.
func checkChannelsAgree(t *testing.T, h *harness, logs *logRecorder, slogBuf *bytes.Buffer, want []string) {
	t.Helper()
	spans, records := h.attempts(), logs.named(attrs.LogEventAttempt)
	slogs := slogRecords(t, slogBuf, "retry attempt")
	if len(spans) != len(want) || len(records) != len(want) || len(slogs) != len(want) {
		t.Fatalf("%d attempt spans, %d log events, %d slog records; want %d each", len(spans), len(records), len(slogs), len(want))
	}
	var wantCounted, wantTimed []string
	for i, rec := range records {
		kv := recordAttrs(rec)
		got := kv[attrs.DecisionKey].AsString() + "/" + kv[attrs.ReasonKey].AsString()
		if got != want[i] {
			t.Errorf("attempt %d: %s, want %s", i+1, got, want[i])
		}
		for k, v := range kv {
			sv, ok := spantest.Attr(spans[i], k)
			if !ok {
				t.Errorf("attempt %d: the log event has %s=%s, the span does not", i+1, k, v.Emit())
			} else if sv.Emit() != v.Emit() {
				t.Errorf("attempt %d: %s is %s in the log event, %s on the span", i+1, k, v.Emit(), sv.Emit())
			}
			if s, ok := slogs[i][string(k)]; !ok || toString(s) != v.Emit() {
				t.Errorf("attempt %d: %s is %s in the log event, %v in the slog record", i+1, k, v.Emit(), s)
			}
		}
		for k := range slogs[i] {
			if _, ok := kv[attribute.Key(k)]; !ok && k != "time" && k != "level" && k != "msg" && k != "trace_id" && k != "span_id" {
				t.Errorf("attempt %d: the slog record has %s, the log event does not", i+1, k)
			}
		}
		// What the metrics carry of the same record.
		common := []string{attrs.HTTPRequestMethodKey.String(kv[attrs.HTTPRequestMethodKey].AsString()).Value.Emit(),
			kv[attrs.DecisionKey].AsString(), kv[attrs.ErrorClassKey].Emit()}
		wantCounted = append(wantCounted, strings.Join(append(common, kv[attrs.HTTPResponseStatusCodeKey].Emit()), "|"))
		wantTimed = append(wantTimed, strings.Join(append(common, kv[attrs.ErrorTypeKey].Emit()), "|"))
	}
	gotCounted, gotTimed := metricAttempts(t, h)
	slices.Sort(wantCounted)
	slices.Sort(wantTimed)
	if !slices.Equal(gotCounted, wantCounted) {
		t.Errorf("retry.attempts: %v, the log events say %v", gotCounted, wantCounted)
	}
	if !slices.Equal(gotTimed, wantTimed) {
		t.Errorf("retry.attempt.duration: %v, the log events say %v", gotTimed, wantTimed)
	}
}

// metricAttempts returns, one entry per attempt, the labels of
// retry.attempts (method, decision, error class, status) and of
// retry.attempt.duration (method, decision, error class, error.type).
func metricAttempts(t *testing.T, h *harness) (counted, timed []string) {
	t.Helper()
	label := func(s attribute.Set, k attribute.Key) string { v, _ := s.Value(k); return v.Emit() }
	common := func(s attribute.Set) []string {
		return []string{label(s, attrs.HTTPRequestMethodKey), label(s, attrs.DecisionKey), label(s, attrs.ErrorClassKey)}
	}
	for _, sm := range h.collect(t).ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch m.Name {
			case "retry.attempts":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					for range dp.Value {
						counted = append(counted, strings.Join(append(common(dp.Attributes), label(dp.Attributes, attrs.HTTPResponseStatusCodeKey)), "|"))
					}
				}
			case "retry.attempt.duration":
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					for range dp.Count {
						timed = append(timed, strings.Join(append(common(dp.Attributes), label(dp.Attributes, attrs.ErrorTypeKey)), "|"))
					}
				}
			}
		}
	}
	slices.Sort(counted)
	slices.Sort(timed)
	return counted, timed
}

// slogRecords decodes the JSON slog records with message msg.
func slogRecords(t *testing.T, buf *bytes.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// lateWriter is a base that reports its writes through httptrace as an
// HTTP/2 client may: the request written (WroteRequest) only after the
// response headers arrived, and a second write (a resend of its own) when
// the body is read.
type lateWriter struct{}

func (lateWriter) RoundTrip(r *http.Request) (*http.Response, error) {
	trace := httptrace.ContextClientTrace(r.Context())
	trace.GetConn("api.test:80")
	trace.GotConn(httptrace.GotConnInfo{})
	trace.WroteHeaders()
	return &http.Response{StatusCode: 200, Body: &lateBody{trace: trace, r: strings.NewReader("ok")}, Request: r}, nil
}

type lateBody struct {
	trace *httptrace.ClientTrace
	r     io.Reader
}

func (b *lateBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return n, err
}

func (*lateBody) Close() error { return nil }

// Writes the base reports after the attempt was recorded are an event of
// their own, on every channel that carries the attempt's writes: a
// wire_late span event (and a wire_resend event per extra write), a
// retry.wire log event and a slog record, each with the attempt's ids and
// its writes now. What was recorded stays as it was: the attempt span's
// retry.wire.writes is the count at its answer.
func TestLateWritesAreAnEventOfTheirOwn(t *testing.T) {
	var slogBuf bytes.Buffer
	logs := &logRecorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(logs))
	defer lp.Shutdown(context.Background())
	h := newHarness(t, nil, otelretry.WithLoggerProvider(lp),
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogBuf, nil))))
	tr := otelretry.NewTransport(lateWriter{}, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
		otelretry.WithLoggerProvider(lp), otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogBuf, nil))))
	resp, err := tr.RoundTrip(get(t, otelretry.WithOperationID(t.Context(), "op-late"), "http://api.test/"))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()

	span := h.attempts()[0]
	if w := attrOf(span, attrs.WireWritesKey).AsInt64(); w != 1 {
		t.Errorf("the attempt span's retry.wire.writes = %d, want 1: the count at its answer, not rewritten", w)
	}
	var late []int64
	resends := 0
	for _, e := range span.Events() {
		switch e.Name {
		case attrs.EventWireLate:
			for _, kv := range e.Attributes {
				if kv.Key == attrs.WireWritesKey {
					late = append(late, kv.Value.AsInt64())
				}
			}
		case attrs.EventWireResend:
			resends++
		}
	}
	if !slices.Equal(late, []int64{2}) || resends != 1 {
		t.Errorf("span events: wire_late writes %v, %d wire_resend; want [2] and 1", late, resends)
	}
	records := logs.named(attrs.LogEventWire)
	if len(records) != 1 {
		t.Fatalf("%d retry.wire log events, want 1", len(records))
	}
	kv := recordAttrs(records[0])
	if kv[attrs.WireWritesKey].AsInt64() != 2 || kv[attrs.RequestIDKey].AsString() != "op-late/attempt-1" || kv[attrs.OperationIDKey].AsString() != "op-late" {
		t.Errorf("retry.wire = %v; want writes 2 of op-late/attempt-1", kv)
	}
	if sl := slogRecords(t, &slogBuf, "retry wire"); len(sl) != 1 || sl[0][string(attrs.WireWritesKey)] != float64(2) {
		t.Errorf("slog records of the late writes: %v, want one with writes 2", sl)
	}
}

// Each client span carries its own request's sanitized URL, also when an
// operation's state check calls through the same client while the
// operation is open; a URL with nothing to redact is left as otelhttp
// wrote it.
func TestClientSpanURLIsItsOwnRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		hook := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			resp, err := h.client.Do(get(t, ctx, "http://state.test/lookup?key=SECRET-1"))
			if err != nil {
				return otelretry.StateResult{}, err
			}
			return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
		}
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}, {Status: 200}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithStateCheck(hook))
		resp, err := h.client.Do(post(t, t.Context(), "http://u:pw@api.test/orders?sig=SECRET-2", "x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = h.client.Do(get(t, t.Context(), "http://api.test/plain"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		want := map[string]bool{
			"http://REDACTED:REDACTED@api.test/orders?sig=REDACTED": false,
			"http://state.test/lookup?key=REDACTED":                 false,
			"http://api.test/plain":                                 false,
		}
		for _, s := range h.ended() {
			if s.SpanKind() != trace.SpanKindClient {
				continue
			}
			u := attrOf(s, attrs.URLFullKey).AsString()
			if _, ok := want[u]; !ok {
				t.Errorf("client span url.full = %q", u)
			}
			want[u] = true
		}
		for u, seen := range want {
			if !seen {
				t.Errorf("no client span with url.full %q", u)
			}
		}
	})
}

// A base that panics, with client spans: no span exported after the panic
// carries the request's raw query values.
func TestBasePanicExportsNoRawURL(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Panic: "boom"}})
	func() {
		defer func() { recover() }()
		h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/v1?token=TOK-SECRET"))
	}()
	if d := dumpSpans(h.ended()); strings.Contains(d, "TOK-SECRET") {
		t.Errorf("exported spans leak the query value:\n%s", d)
	}
}

// The seed's read, with log events on, in both span modes: one
// retry.attempt record per attempt carrying the attempt span's list, in its
// context, timed at its end, and one retry.operation record.
func TestLogEventsFollowTheSeedRead(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []otelretry.Option
	}{
		{"client spans", nil},
		{"own attempt spans", []otelretry.Option{otelretry.WithoutClientSpans()}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, rec := newLogHarness(t, []scripted.Step{
					{Delay: 80 * time.Millisecond, Status: 503},
					{Delay: 80 * time.Millisecond, Status: 503},
					{Delay: 50 * time.Millisecond, Status: 200},
				}, append(slices.Clone(seedOptions), mode.opts...)...)
				resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-42"), "http://user:pw@api.test:8080/items?token=secret"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				op := h.operation(t)
				spans := h.attempts()
				records := rec.named(attrs.LogEventAttempt)
				if len(records) != 3 || len(spans) != 3 {
					t.Fatalf("attempt records = %d, attempt spans = %d, want 3 each", len(records), len(spans))
				}
				ends := []time.Duration{80 * time.Millisecond, 200 * time.Millisecond, 290 * time.Millisecond}
				sevs := []log.Severity{log.SeverityWarn, log.SeverityWarn, log.SeverityInfo}
				for i, r := range records {
					span := spans[i]
					if r.TraceID() != span.SpanContext().TraceID() || r.SpanID() != span.SpanContext().SpanID() {
						t.Errorf("attempt %d: record ids %s/%s, span %s/%s", i+1, r.TraceID(), r.SpanID(),
							span.SpanContext().TraceID(), span.SpanContext().SpanID())
					}
					if got := r.Timestamp().Sub(op.StartTime()); got != ends[i] {
						t.Errorf("attempt %d: timestamp at %v after the start, want %v (its end)", i+1, got, ends[i])
					}
					if r.Severity() != sevs[i] || r.SeverityText() != sevs[i].String() {
						t.Errorf("attempt %d: severity %v %q, want %v", i+1, r.Severity(), r.SeverityText(), sevs[i])
					}
					got := recordAttrs(r)
					if len(got) != r.AttributesLen() {
						t.Errorf("attempt %d: duplicate attributes", i+1)
					}
					for _, kv := range span.Attributes() {
						k := string(kv.Key)
						if mode.opts == nil && !isAttemptField(k) {
							continue // otelhttp's own client attributes
						}
						if v, ok := got[kv.Key]; !ok || v.Emit() != kv.Value.Emit() {
							t.Errorf("attempt %d: %s is %q in the record, %q on the span", i+1, k, v.Emit(), kv.Value.Emit())
						}
					}
					for k, v := range got {
						sv, ok := spantest.Attr(span, k)
						if !ok || sv.Emit() != v.Emit() {
							t.Errorf("attempt %d: the record has %s=%q, the span %q (%v)", i+1, k, v.Emit(), sv.Emit(), ok)
						}
					}
					if u := got[attrs.URLFullKey].AsString(); u != "http://REDACTED:REDACTED@api.test:8080/items?token=REDACTED" {
						t.Errorf("attempt %d: url.full = %q", i+1, u)
					}
				}
				ops := rec.named(attrs.LogEventOperation)
				if len(ops) != 1 {
					t.Fatalf("operation records = %d, want 1", len(ops))
				}
				o := ops[0]
				if o.TraceID() != op.SpanContext().TraceID() || o.SpanID() != op.SpanContext().SpanID() {
					t.Errorf("operation record not in the operation span's context")
				}
				if !o.Timestamp().Equal(op.StartTime()) || o.Severity() != log.SeverityInfo {
					t.Errorf("operation record at %v severity %v, want the start %v, INFO", o.Timestamp(), o.Severity(), op.StartTime())
				}
				want := map[attribute.Key]string{
					attrs.OperationIDKey: "op-42", attrs.HTTPRequestMethodKey: "GET",
					attrs.URLFullKey:       "http://REDACTED:REDACTED@api.test:8080/items?token=REDACTED",
					attrs.ServerAddressKey: "api.test", attrs.ServerPortKey: "8080",
					attrs.DeadlineMsKey: "400", attrs.AttemptsKey: "3", attrs.OutcomeKey: "return",
					attrs.ReasonKey: string(attrs.ReasonResponse), attrs.OperationDurationMsKey: "290",
				}
				got := recordAttrs(o)
				if len(got) != len(want) {
					t.Errorf("operation record attributes = %v, want %v", got, want)
				}
				for k, v := range want {
					if got[k].Emit() != v {
						t.Errorf("operation record %s = %q, want %q", k, got[k].Emit(), v)
					}
				}
			})
		})
	}
}

// isAttemptField tells the attempt event's fields from otelhttp's own
// client attributes on its CLIENT span.
func isAttemptField(k string) bool {
	switch k {
	case "url.full", "http.request.method", "http.response.status_code", "error.type", "http.request.resend_count":
		return true
	}
	return len(k) > 6 && k[:6] == "retry."
}

// The seed's write timeline: the attempt that ends in check_state and the
// operation are ERROR, in the log events and in the slog record alike.
func TestLogEventsSeverityOfAnUnknownWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h, rec := newLogHarness(t, []scripted.Step{{Hang: true}, {Status: 201}},
			append(slices.Clone(seedOptions), otelretry.WithAttemptTimeout(120*time.Millisecond),
				otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))...)
		_, err := h.client.Do(post(t, otelretry.WithOperationID(t.Context(), "op-7"), "http://api.test/orders", `{"sku":1}`))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v", err)
		}
		a, o := rec.named(attrs.LogEventAttempt), rec.named(attrs.LogEventOperation)
		if len(a) != 1 || len(o) != 1 {
			t.Fatalf("records: %d attempts, %d operations", len(a), len(o))
		}
		if a[0].Severity() != log.SeverityError || o[0].Severity() != log.SeverityError || o[0].SeverityText() != "ERROR" {
			t.Errorf("severities %v, %v, want ERROR", a[0].Severity(), o[0].Severity())
		}
		got := recordAttrs(o[0])
		if got[attrs.OutcomeKey].AsString() != "check_state" || got[attrs.ReasonKey].AsString() == "" ||
			got[attrs.ErrorTypeKey].AsString() != "timeout" || got[attrs.AttemptsKey].AsInt64() != 1 {
			t.Errorf("operation record = %v", got)
		}
		var r map[string]any
		if err := json.Unmarshal(buf.Bytes(), &r); err != nil || r["level"] != "ERROR" {
			t.Errorf("slog record %v (%v), want level ERROR", r, err)
		}
	})
}

// The slog record and the log event of an attempt have one severity:
// WARN for a retry, INFO for the return.
func TestSlogLevelsFollowTheLogEventSeverity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var levels []any
		for dec := json.NewDecoder(&buf); dec.More(); {
			var r map[string]any
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			levels = append(levels, r["level"])
		}
		if len(levels) != 2 || levels[0] != "WARN" || levels[1] != "INFO" {
			t.Errorf("levels = %v, want [WARN INFO]", levels)
		}
	})
}

// countingLogger is a log.Logger that counts its calls and emits only when
// enabled says so.
type countingLogger struct {
	embedded.Logger
	enabled bool
	mu      sync.Mutex
	asked   []log.EnabledParameters
	emitted int
}

func (l *countingLogger) Enabled(_ context.Context, p log.EnabledParameters) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, p)
	return l.enabled
}

func (l *countingLogger) Emit(context.Context, log.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emitted++
}

type countingProvider struct {
	embedded.LoggerProvider
	l *countingLogger
}

func (p countingProvider) Logger(string, ...log.LoggerOption) log.Logger { return p.l }

// A Logger that is not enabled is asked, with the event's name and
// severity, and given nothing.
func TestLogEventsAskEnabledFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &countingLogger{}
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithLoggerProvider(countingProvider{l: l}), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := []log.EnabledParameters{
			{Severity: log.SeverityWarn, EventName: attrs.LogEventAttempt},
			{Severity: log.SeverityInfo, EventName: attrs.LogEventAttempt},
			{Severity: log.SeverityInfo, EventName: attrs.LogEventOperation},
		}
		if !slices.Equal(l.asked, want) || l.emitted != 0 {
			t.Errorf("asked %v, emitted %d; want %v and nothing emitted", l.asked, l.emitted, want)
		}
	})
}

// A nil LoggerProvider is ignored.
func TestWithLoggerProviderIgnoresNil(t *testing.T) {
	tr := otelretry.NewTransport(&reusedResponse{statuses: []int{http.StatusOK}}, otelretry.WithLoggerProvider(nil))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// discardProcessor is an sdk/log Processor that takes every record and
// keeps none, so that only the transport's and the SDK's own work is
// counted.
type discardProcessor struct{}

func (discardProcessor) OnEmit(context.Context, *sdklog.Record) error { return nil }

func (discardProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (discardProcessor) Shutdown(context.Context) error { return nil }

func (discardProcessor) ForceFlush(context.Context) error { return nil }

// TestLogEventAllocations pins what the log events add to an operation
// with no-op tracer and meter providers (see TestNoopPathAllocations):
// nothing without WithLoggerProvider, nothing with the no-op
// LoggerProvider (its Logger is never Enabled, so no record is built), and
// with the SDK's LoggerProvider 14 for an operation of one attempt and 28
// for one of three. A memory profile accounts for them: per record, the
// record's own storage for the attributes past the five it holds inline
// (1), the SDK's copy of the record (1) and the SDK's storage for those
// attributes, which it grows one attribute at a time (4); per attempt,
// its request id (1); per operation, its generated id (1), which a
// recording span would have made anyway. Its sanitized URL is the
// Transport's last one while the URL repeats (none). The SDK's share
// may change with its version: the benchmarks module compares the whole
// with emitting the same records straight through the SDK.
func TestLogEventAllocations(t *testing.T) {
	base := []otelretry.Option{
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithoutBudget(),
	}
	sdk := sdklog.NewLoggerProvider(sdklog.WithProcessor(discardProcessor{}))
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	for _, tc := range []struct {
		name     string
		opts     []otelretry.Option
		statuses []int
		want     float64
	}{
		{"off/success", nil, []int{http.StatusOK}, noopFirst},
		{"off/503,503,200", nil, []int{503, 503, 200}, noopFirst + 2*noopLater},
		{"noop/success", []otelretry.Option{otelretry.WithLoggerProvider(lognoop.NewLoggerProvider())}, []int{http.StatusOK}, noopFirst},
		{"noop/503,503,200", []otelretry.Option{otelretry.WithLoggerProvider(lognoop.NewLoggerProvider())}, []int{503, 503, 200}, noopFirst + 2*noopLater},
		{"sdk/success", []otelretry.Option{otelretry.WithLoggerProvider(sdk)}, []int{http.StatusOK}, noopFirst + 14},
		{"sdk/503,503,200", []otelretry.Option{otelretry.WithLoggerProvider(sdk)}, []int{503, 503, 200}, noopFirst + 2*noopLater + 28},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if raceScale > 1 && strings.HasPrefix(tc.name, "sdk/") {
				t.Skip("the race detector makes sync.Pool, which the SDK's records use, drop items at random")
			}
			rt := otelretry.NewTransport(&reusedResponse{statuses: tc.statuses}, append(slices.Clone(base), tc.opts...)...)
			req, err := http.NewRequest(http.MethodGet, "http://api.example.test/v1/items?id=42", nil)
			if err != nil {
				t.Fatal(err)
			}
			op := func() {
				resp, err := rt.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("RoundTrip = %v, %v", resp, err)
				}
				resp.Body.Close()
			}
			op() // warm the pools
			if got := testing.AllocsPerRun(100, op); got != tc.want {
				t.Errorf("allocations per operation = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoggerWritesOneRecordPerAttemptMatchingTheSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h := newHarness(t, []scripted.Step{{Delay: 80 * time.Millisecond, Status: 503}, {Delay: 50 * time.Millisecond, Status: 200}},
			append(seedOptions, otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))...)
		resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-1"), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		dec := json.NewDecoder(&buf)
		var records []map[string]any
		for dec.More() {
			var r map[string]any
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			records = append(records, r)
		}
		spans := h.attempts()
		if len(records) != 2 || len(spans) != 2 {
			t.Fatalf("records=%d attempt spans=%d, want 2 each", len(records), len(spans))
		}
		for i, r := range records {
			e := readEvent(t, spans[i])
			if r["retry.request.id"] != e.RequestID || r["retry.decision"] != e.Decision ||
				r["retry.remaining_ms"] != float64(e.RemainingMs) || r["retry.elapsed_ms"] != float64(e.ElapsedMs) ||
				r["http.response.status_code"] != float64(e.Status) {
				t.Errorf("record %d = %v, span event = %+v", i, r, e)
			}
			if r["span_id"] != spans[i].SpanContext().SpanID().String() || r["trace_id"] != spans[i].SpanContext().TraceID().String() {
				t.Errorf("record %d is not tied to its attempt span", i)
			}
			if _, both := r["retry.error_class"]; both {
				t.Errorf("record %d has an error class next to a status", i)
			}
		}
	})
}

// The attempt's CLIENT span carries the HTTP client attributes otelhttp
// writes for the same request: compared against a plain otelhttp span.
func TestAttemptSpanHasOtelhttpsClientAttributes(t *testing.T) {
	for _, status := range []int{200, 404} {
		plainRec := tracetest.NewSpanRecorder()
		plain := otelhttp.NewTransport(scripted.New(scripted.Step{Status: status}),
			otelhttp.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(plainRec))))
		h := newHarness(t, []scripted.Step{{Status: status}}, otelretry.WithMaxAttempts(1))
		for _, rt := range []http.RoundTripper{plain, h.transprt} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test:8080/v1/items", nil)
			req.Header.Set("User-Agent", "shape-test")
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		want := plainRec.Ended()[0]
		got := h.attempts()[0]
		if got.SpanKind() != trace.SpanKindClient || got.Name() != "GET" {
			t.Errorf("attempt span %q %v, want CLIENT named GET", got.Name(), got.SpanKind())
		}
		for _, kv := range want.Attributes() {
			if v, ok := spantest.Attr(got, kv.Key); !ok || v != kv.Value {
				t.Errorf("status %d: %s = %v on the attempt span, otelhttp writes %v", status, kv.Key, v.Emit(), kv.Value.Emit())
			}
		}
		if want.Status() != got.Status() {
			t.Errorf("status %d: span status %v, otelhttp's %v", status, got.Status(), want.Status())
		}
	}
}

// error.type is set where the semantic conventions ask for it: on attempts
// without a 2xx or 3xx, and on operations that did not end return; never
// on a success.
func TestErrorType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}, {Status: 200}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var types []string
		for _, a := range h.attempts() {
			v, ok := spantest.Attr(a, attrs.ErrorTypeKey)
			if !ok {
				types = append(types, "-")
				continue
			}
			types = append(types, v.AsString())
		}
		if strings.Join(types, ",") != "503,timeout,-" {
			t.Errorf("attempt error.type = %v, want 503, timeout, none", types)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		resp, _ := h.client.Do(get(t, t.Context(), "http://api.test/"))
		resp.Body.Close()
		if got := attrOf(h.operation(t), attrs.ErrorTypeKey).AsString(); got != "503" {
			t.Errorf("operation error.type = %q, want 503 (max_attempts after 503s)", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}})
		resp, _ := h.client.Do(get(t, t.Context(), "http://api.test/"))
		resp.Body.Close()
		if _, ok := spantest.Attr(h.operation(t), attrs.ErrorTypeKey); ok {
			t.Errorf("a successful operation carries error.type")
		}
	})
}

// Samplers and tail-sampling policies see method, url.full (sanitized) and
// server.address on the operation span at its start.
func TestOperationAttributesAtStart(t *testing.T) {
	start := &startAttributes{}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(start), sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 200}), otelretry.WithTracerProvider(tp))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test:8443/items?token=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	atStart := start.seen()[0] // the operation span starts first
	want := map[attribute.Key]string{
		attrs.HTTPRequestMethodKey: "GET",
		attrs.URLFullKey:           "http://api.test:8443/items?token=REDACTED",
		attrs.ServerAddressKey:     "api.test",
		attrs.ServerPortKey:        "8443",
	}
	for k, v := range want {
		if got, ok := attrValue(atStart, k); !ok || got != v {
			t.Errorf("%s at start = %q (set %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := attrValue(atStart, attrs.OperationIDKey); !ok {
		t.Errorf("retry.operation.id not set at start")
	}
}

// The log record and the attempt span carry one list of fields.
func TestLogRecordAndSpanCarryOneFieldList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"0"}}}, {Status: 200}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/items?page=2"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		dec := json.NewDecoder(&buf)
		for i, span := range h.attempts() {
			var rec map[string]any
			if err := dec.Decode(&rec); err != nil {
				t.Fatal(err)
			}
			for _, kv := range span.Attributes() {
				k := string(kv.Key)
				if !strings.HasPrefix(k, "retry.") && k != "http.request.resend_count" && k != "url.full" {
					continue // otelhttp's own client attributes
				}
				v, ok := rec[k]
				if !ok {
					t.Errorf("attempt %d: the log record lacks %s", i+1, k)
					continue
				}
				if want := kv.Value.Emit(); toString(v) != want {
					t.Errorf("attempt %d: %s is %v in the log, %s on the span", i+1, k, v, want)
				}
			}
			for k := range rec {
				switch k {
				case "time", "level", "msg", "trace_id", "span_id":
					continue
				}
				if _, ok := spantest.Attr(span, attribute.Key(k)); !ok {
					t.Errorf("attempt %d: the log record has %s, the span does not", i+1, k)
				}
			}
		}
	})
}

func toString(v any) string {
	switch v := v.(type) {
	case float64:
		return strings.TrimSuffix(strings.TrimSuffix(jsonNumber(v), ".0"), ".")
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) }

// With an instrumented base (WithoutClientSpans), the attempt span is the
// transport's INTERNAL span, carrying the attempt event, and the base's
// CLIENT span nests under it.
func TestWithoutClientSpansNestsTheBasesClientSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := otelhttp.NewTransport(scripted.New(scripted.Step{Status: 200}), otelhttp.WithTracerProvider(tp))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans())
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := rec.Ended()
	attempts := spantest.Attempts(spans)
	if len(spans) != 3 || len(attempts) != 1 {
		t.Fatalf("spans = %d (attempts %d), want the operation, the attempt and the base's client span", len(spans), len(attempts))
	}
	a := attempts[0]
	if a.SpanKind() != trace.SpanKindInternal || a.Name() != "GET" {
		t.Errorf("attempt span %q %v, want INTERNAL named GET", a.Name(), a.SpanKind())
	}
	clients := spantest.Children(spans, a)
	if len(clients) != 1 || clients[0].SpanKind() != trace.SpanKindClient {
		t.Fatalf("want the base's CLIENT span under the attempt span")
	}
}

// A method outside the standard set (PURGE, or a standard name in another
// case, as method names are case-sensitive) is http.request.method=_OTHER
// with http.request.method_original on every channel otelretry writes, as
// the HTTP semantic conventions ask and as otelhttp's CLIENT span says for
// PURGE: the operation span, the attempt span (otelhttp's own says GET for
// get, and otelretry writes over it), the retry.attempt and
// retry.operation log records, the slog record, and otelretry's metric
// label (which carries no original, to bound its series). otelhttp's own
// metrics are otelhttp's: _OTHER for PURGE, but GET for get (it
// upper-cases a method before it looks it up), which docs and the
// CHANGELOG say.
func TestMethodOutsideTheStandardSetIsOtherOnEveryChannel(t *testing.T) {
	const methodKey, originalKey = attribute.Key("http.request.method"), attribute.Key("http.request.method_original")
	for _, method := range []string{"PURGE", "get"} {
		for _, clientSpans := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clientSpans=%v", method, clientSpans), func(t *testing.T) {
				var buf bytes.Buffer
				opts := []otelretry.Option{otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil)))}
				if !clientSpans {
					opts = append(opts, otelretry.WithoutClientSpans())
				}
				h, logs := newLogHarness(t, []scripted.Step{{Status: 200}}, opts...)
				req, err := http.NewRequestWithContext(t.Context(), method, "http://api.test/cache", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := h.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				check := func(channel string, get func(attribute.Key) (string, bool)) {
					t.Helper()
					m, _ := get(methodKey)
					o, ok := get(originalKey)
					if m != "_OTHER" || !ok || o != method {
						t.Errorf("%s: method %q, original %q (set %v); want _OTHER and %q", channel, m, o, ok, method)
					}
				}
				fromSpan := func(s sdktrace.ReadOnlySpan) func(attribute.Key) (string, bool) {
					return func(k attribute.Key) (string, bool) { return attrValue(s.Attributes(), k) }
				}
				fromRecord := func(rec sdklog.Record) func(attribute.Key) (string, bool) {
					return func(k attribute.Key) (string, bool) {
						v, ok := recordAttrs(rec)[k]
						return v.Emit(), ok
					}
				}
				check("operation span", fromSpan(h.operation(t)))
				attempts := h.attempts()
				if len(attempts) != 1 {
					t.Fatalf("%d attempt spans, want 1", len(attempts))
				}
				check("attempt span", fromSpan(attempts[0]))
				for _, name := range []string{attrs.LogEventAttempt, attrs.LogEventOperation} {
					recs := logs.named(name)
					if len(recs) != 1 {
						t.Fatalf("%d %s records, want 1", len(recs), name)
					}
					check(name+" record", fromRecord(recs[0]))
				}
				var rec map[string]any
				if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
					t.Fatalf("slog record %q: %v", buf.String(), err)
				}
				check("slog record", func(k attribute.Key) (string, bool) {
					v, ok := rec[string(k)].(string)
					return v, ok
				})
				rm := h.collect(t)
				if got := sumBy(t, rm, "retry.attempts", methodKey); len(got) != 1 || got["_OTHER"] != 1 {
					t.Errorf("retry.attempts by method = %v, want one attempt labelled _OTHER", got)
				}
				if !clientSpans {
					return
				}
				otelhttpLabel := map[string]string{"PURGE": "_OTHER", "get": "GET"}[method]
				if got := histogramCountBy(rm, "http.client.request.duration", methodKey); len(got) != 1 || got[otelhttpLabel] != 1 {
					t.Errorf("otelhttp's http.client.request.duration by method = %v, want one request labelled %s", got, otelhttpLabel)
				}
			})
		}
	}
}

// otelhttp names a failed attempt's error.type on its own metrics by the
// Go type of the error it got, by reflection (its span honours the
// error's ErrorType): a connection refused and an attempt timeout are one
// series there, the attempt error's type, while the CLIENT spans carry
// their classes (docs/telemetry.md says so and where to read classes).
// Should otelhttp read ErrorType for its metrics too, this fails, and the
// doc is to be changed.
func TestOtelhttpsMetricsNameEveryFailureByOneType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		h := newHarness(t, []scripted.Step{{Err: refused}, {Hang: true}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithAttemptTimeout(time.Second), otelretry.WithoutBudget())
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var classes []string
		for _, a := range h.attempts() {
			if v, ok := attrValue(a.Attributes(), "error.type"); ok {
				classes = append(classes, v)
			}
		}
		if !slices.Equal(classes, []string{string(attrs.ErrorClassConnectionRefused), string(attrs.ErrorClassTimeout)}) {
			t.Errorf("CLIENT spans' error.type %q; want the classes", classes)
		}
		got := histogramCountBy(h.collect(t), "http.client.request.duration", "error.type")
		if want := map[string]uint64{"": 1, "github.com/otelretry/otelretry-go/otelretry.attemptError": 2}; !maps.Equal(got, want) {
			t.Errorf("otelhttp's http.client.request.duration by error.type %v; want %v", got, want)
		}
	})
}

func (h *harness) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func sumBy(t *testing.T, rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(key)
				out[v.Emit()] += dp.Value
			}
		}
	}
	return out
}

// histogramCountBy returns the count of the float64 histogram name's
// data points by the value of key.
func histogramCountBy(rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]uint64 {
	out := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					v, _ := dp.Attributes.Value(key)
					out[v.Emit()] += dp.Count
				}
			}
		}
	}
	return out
}

func TestTelemetryUsesTheLibraryScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := instrumentation.Scope{Name: otelretry.ScopeName, Version: otelretry.Version}
		if got := h.operation(t).InstrumentationScope(); got != want {
			t.Errorf("span scope = %+v, want %+v", got, want)
		}
		var found bool
		for _, sm := range h.collect(t).ScopeMetrics {
			if sm.Scope == want {
				found = len(sm.Metrics) == 6
			}
		}
		if !found {
			t.Error("no scope with the six retry instruments under the library scope")
		}
	})
}

// Ten operations, three of which end deadline_exceeded: the dashboard's
// deadline ratio is exactly 0.3, and the retry share computed from the
// metrics equals the one computed from the spans of the same run.
func TestDashboardRatiosAreExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Per operation: 503 then 200 (7 ops), or 503 with Retry-After past
		// the budget (3 ops).
		var steps []scripted.Step
		for i := range 10 {
			if i%3 == 0 && i < 9 {
				steps = append(steps, scripted.Step{Status: 503, Header: http.Header{"Retry-After": {"60"}}})
				continue
			}
			steps = append(steps, scripted.Step{Status: 503}, scripted.Step{Status: 200})
		}
		// No budget: ten failed first attempts in a row would throttle the
		// retries (and the Retry-After would hold them); this test is about
		// metrics matching spans.
		h := newHarness(t, steps, otelretry.WithDeadline(time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithoutBudget())
		for i := range 10 {
			resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), fmt.Sprint("op-", i)), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		rm := h.collect(t)
		outcomes := sumBy(t, rm, "retry.operations", attrs.OutcomeKey)
		var ops int64
		for _, n := range outcomes {
			ops += n
		}
		if ops != 10 || outcomes["deadline_exceeded"] != 3 {
			t.Fatalf("outcomes = %v", outcomes)
		}
		if ratio := float64(outcomes["deadline_exceeded"]) / float64(ops); ratio != 0.3 {
			t.Fatalf("deadline ratio = %v, want 0.3", ratio)
		}

		decisions := sumBy(t, rm, "retry.attempts", attrs.DecisionKey)
		var attempts int64
		for _, n := range decisions {
			attempts += n
		}
		spanDecisions := map[string]int64{}
		for _, e := range h.events(t) {
			spanDecisions[e.Decision]++
		}
		if attempts != int64(len(h.attempts())) || decisions["retry"] != spanDecisions["retry"] || decisions["retry"] != 7 {
			t.Fatalf("metrics decisions %v (total %d), span decisions %v (total %d)", decisions, attempts, spanDecisions, len(h.attempts()))
		}
	})
}

// Thousands of operations with distinct ids and URLs make a fixed, small
// number of series, and no label value carries an id or a path.
func TestMetricCardinalityIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}, {Status: 404}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		for i := range 3000 {
			url := fmt.Sprintf("http://api.test/users/%d/orders?id=%d", i, i)
			resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), fmt.Sprintf("op-%d", i)), url))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		series := 0
		retrySets(t, h, func(metric string, s attribute.Set) {
			series++
			for _, kv := range s.ToSlice() {
				v := kv.Value.Emit()
				if strings.Contains(v, "op-") || strings.Contains(v, "/") || strings.Contains(v, "users") {
					t.Errorf("%s label %s=%q carries an id or a path", metric, kv.Key, v)
				}
				if kv.Key == attrs.OperationIDKey || kv.Key == attrs.RequestIDKey || kv.Key == attrs.URLFullKey {
					t.Errorf("%s has the label %s", metric, kv.Key)
				}
			}
		})
		// Operations: first 503→200 (return, 2 attempts); the scripted base
		// then answers 404 for ever (stop). Series: operations 2, attempts 3
		// (retry/503, return/200, stop/404), operation.attempts 2,
		// operation.duration 2, attempt.duration 3, backoff 1.
		if series != 13 {
			t.Fatalf("series = %d, want 13 for 3000 distinct operations", series)
		}
	})
}

// WithMetricAttributes adds the user's labels to every retry instrument and
// drops ids, URLs and the recorder's own keys.
func TestMetricAttributesEnrichEveryInstrument(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithMetricAttributes(func(r *http.Request) []attribute.KeyValue {
				return []attribute.KeyValue{
					attribute.String("dependency", "orders"),
					attrs.OperationIDKey.String("op-must-not-be-a-label"),
					attrs.URLFullKey.String(r.URL.String()),
					attrs.DecisionKey.String("forged"),
				}
			}))
		resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-1"), "http://api.test/x?id=7"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		seen := 0
		retrySets(t, h, func(metric string, s attribute.Set) {
			seen++
			if v, ok := s.Value("dependency"); !ok || v.AsString() != "orders" {
				t.Errorf("%s: no dependency=orders label in %v", metric, s.ToSlice())
			}
			for _, k := range []attribute.Key{attrs.OperationIDKey, attrs.URLFullKey} {
				if s.HasValue(k) {
					t.Errorf("%s carries %s", metric, k)
				}
			}
			if v, ok := s.Value(attrs.DecisionKey); ok && v.AsString() == "forged" {
				t.Errorf("%s: the enricher overwrote retry.decision", metric)
			}
		})
		if seen != 8 { // operations, operation.attempts, operation.duration: 1; attempts, attempt.duration: 2; backoff: 1
			t.Fatalf("label sets = %d, want 8", seen)
		}
	})
}

// retrySets calls f for every label set of every retry instrument.
func retrySets(t *testing.T, h *harness, f func(metric string, s attribute.Set)) {
	t.Helper()
	for _, sm := range h.collect(t).ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			for _, s := range attributeSets(m) {
				f(m.Name, s)
			}
		}
	}
}

func attributeSets(m metricdata.Metrics) []attribute.Set {
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	}
	return sets
}

// retryDataPointAttributes returns the attribute sets of every data point
// of the retry instruments (the library's scope), by instrument name.
func retryDataPointAttributes(rm metricdata.ResourceMetrics) map[string][]attribute.Set {
	out := map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			}
		}
	}
	return out
}

// server.address is a label of every retry instrument with
// WithServerAddressInMetrics (the host, without the port), and of none
// without it.
func TestMetricsServerAddressOnlyByOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []otelretry.Option
		want string // "" = no server.address label
	}{
		{"default", nil, ""},
		{"WithServerAddressInMetrics", []otelretry.Option{otelretry.WithServerAddressInMetrics()}, "api.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				resp, err := h.client.Do(get(t, t.Context(), "http://api.test:8443/items?id=1"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				sets := retryDataPointAttributes(h.collect(t))
				if len(sets) != 6 {
					t.Fatalf("data points for %d retry instruments, want 6: %v", len(sets), sets)
				}
				for name, ss := range sets {
					for _, s := range ss {
						v, ok := s.Value(attrs.ServerAddressKey)
						if got := v.AsString(); ok != (tc.want != "") || got != tc.want {
							t.Errorf("%s: server.address = %q (present %v), want %q", name, got, ok, tc.want)
						}
					}
				}
			})
		})
	}
}

// A hint header present with no value ("Retry-After:") is malformed, as
// docs/telemetry.md lists it: a retry_after_invalid event with the problem
// empty, and no hint (the backoff's pause). Before, it was taken for an
// absent header and recorded nothing.
func TestAnEmptyHintIsRecordedAsEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {""}}}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(7*time.Millisecond)), otelretry.WithoutBudget())
		start := time.Now()
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/orders"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); took != 7*time.Millisecond {
			t.Errorf("the retry came after %v, want the backoff's 7ms: an empty hint is no hint", took)
		}
		var got []string
		for _, a := range h.attempts() {
			for _, e := range a.Events() {
				if e.Name == attrs.EventRetryAfterInvalid {
					name, _ := attrValue(e.Attributes, attrs.RetryHintHeaderKey)
					problem, _ := attrValue(e.Attributes, attrs.RetryHintProblemKey)
					got = append(got, name+" "+problem)
				}
			}
		}
		if want := []string{"Retry-After empty"}; !slices.Equal(got, want) {
			t.Errorf("retry_after_invalid events = %q, want %q", got, want)
		}
	})
}

// A malformed retry hint is recorded by its header's name and what was
// wrong with it (retry.hint.header, retry.hint.problem on the
// retry_after_invalid event), never by its value: a hint of any header
// read (the defaults, WithRetryHint's) carrying a URL with credentials
// reaches no span, log record, slog record, metric or error.
func TestMalformedHintIsRecordedByItsNameAndProblemOnly(t *testing.T) {
	const hint = "https://ops:HINT-SECRET@status.example/wait?sig=SIG-SECRET"
	synctest.Test(t, func(t *testing.T) {
		var slogs bytes.Buffer
		h, logs := newLogHarness(t, []scripted.Step{
			{Status: 503, Header: http.Header{"Retry-After-Ms": {hint}}},
			{Status: 503, Header: http.Header{"X-Ms-Retry-After-Ms": {hint}, "Retry-After": {hint}}},
			{Status: 503, Header: http.Header{"Retry-After": {hint}}},
			{Status: 503, Header: http.Header{"X-Wait-Ms": {hint}}},
			{Hang: true},
		},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogs, nil))),
			otelretry.WithRetryHint("x-wait-ms", otelretry.HintMilliseconds),
			otelretry.WithMaxAttempts(5), otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
		_, err := h.client.Do(get(t, t.Context(), "http://api.test/orders"))
		if err == nil {
			t.Fatal("want an error: the last attempt timed out")
		}
		var got []string
		for _, a := range h.attempts() {
			for _, e := range a.Events() {
				if e.Name != attrs.EventRetryAfterInvalid {
					continue
				}
				name, _ := attrValue(e.Attributes, attrs.RetryHintHeaderKey)
				problem, _ := attrValue(e.Attributes, attrs.RetryHintProblemKey)
				got = append(got, name+" "+problem)
				if len(e.Attributes) != 2 {
					t.Errorf("retry_after_invalid carries %v, want the header's name and the problem alone", e.Attributes)
				}
			}
		}
		want := []string{"Retry-After-Ms not_a_number", "X-Ms-Retry-After-Ms not_a_number", "Retry-After not_a_date", "X-Wait-Ms not_a_number"}
		if !slices.Equal(got, want) {
			t.Errorf("retry_after_invalid events = %q, want %q", got, want)
		}

		var dump strings.Builder
		for _, s := range h.ended() {
			fmt.Fprintf(&dump, "span %s %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events())
		}
		for _, r := range logs.records {
			fmt.Fprintf(&dump, "record %s %v %v\n", r.EventName(), r.Body().Emit(), recordAttrs(r))
		}
		fmt.Fprintf(&dump, "slog %s\nerror %s\n", slogs.String(), err.Error())
		for _, sm := range h.collect(t).ScopeMetrics {
			for _, m := range sm.Metrics {
				fmt.Fprintf(&dump, "metric %s %+v\n", m.Name, m.Data)
			}
		}
		for _, secret := range []string{"HINT-SECRET", "SIG-SECRET", "status.example"} {
			if strings.Contains(dump.String(), secret) {
				t.Errorf("the telemetry or the error holds %q:\n%s", secret, dump.String())
			}
		}
	})
}

// A 101 Switching Protocols (a WebSocket upgrade through http.Client) is
// an answer the decision returns as a success (decisions.md, row 12), so
// no channel records it as an error: otelhttp writes no error.type on its
// CLIENT span for it, and the attempt span otelretry writes itself, the
// log record and the metrics carry the same list.
func TestASwitchingProtocolsAnswerIsNoErrorOnAnyChannel(t *testing.T) {
	for name, opts := range map[string][]otelretry.Option{
		"client span":         nil,
		"without client span": {otelretry.WithoutClientSpans()},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			opts = append(opts, otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			h := newHarness(t, []scripted.Step{{Status: http.StatusSwitchingProtocols}}, opts...)
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/ws"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			att := h.attempts()
			if len(att) != 1 {
				t.Fatalf("%d attempt spans, want 1", len(att))
			}
			if d := attrOf(att[0], attrs.DecisionKey).AsString(); d != "return" {
				t.Fatalf("decision %q, want return", d)
			}
			if v, ok := spantest.Attr(att[0], attrs.ErrorTypeKey); ok {
				t.Errorf("attempt span: error.type=%s", v.Emit())
			}
			for line := range strings.Lines(logs.String()) {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if v, ok := rec[string(attrs.ErrorTypeKey)]; ok {
					t.Errorf("log record %v: error.type=%v", rec["msg"], v)
				}
			}
			var rm metricdata.ResourceMetrics
			if err := h.reader.Collect(t.Context(), &rm); err != nil {
				t.Fatal(err)
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					h, ok := m.Data.(metricdata.Histogram[float64])
					if !ok {
						continue
					}
					for _, dp := range h.DataPoints {
						if v, ok := dp.Attributes.Value(attrs.ErrorTypeKey); ok {
							t.Errorf("%s: error.type=%s", m.Name, v.Emit())
						}
					}
				}
			}
		})
	}
}

// retry.backoff.duration records the pauses taken: one the caller cut
// short counts what it took. It counted the pause planned, so a caller
// that gave up 10 ms into a 1 s pause left 1 s of backoff in an operation
// of 10 ms, whose duration counts its backoff.
func TestAPauseTheCallerCutShortIsRecordedAsLongAsItLasted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second)))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(10*time.Millisecond, cancel)
		if resp, err := h.client.Do(get(t, ctx, "http://api.test/")); err == nil {
			resp.Body.Close()
			t.Fatal("the operation outlived its caller")
		}
		sums := histogramSums(h.collect(t))
		if backoff, op := sums["retry.backoff.duration"], sums["retry.operation.duration"]; backoff != 0.01 || op != 0.01 {
			t.Errorf("retry.backoff.duration %vs in an operation of %vs canceled 10ms into its 1s pause; want 0.01s of each", backoff, op)
		}
	})
}

// histogramSums is the sum of each float histogram in rm, by name.
func histogramSums(rm metricdata.ResourceMetrics) map[string]float64 {
	sums := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if hist, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, dp := range hist.DataPoints {
					sums[m.Name] += dp.Sum
				}
			}
		}
	}
	return sums
}

// An operation lasts until RoundTrip returns, whatever it ends with. One
// that ended with an error recorded its duration (retry.operation.duration,
// and retry.operation.duration_ms on its log record) at its last attempt's
// end, leaving out a Classifier's 200 ms after it; its span, and the same
// operation ended with an answer, said 210 ms.
func TestAnOperationsDurationCountsTheHooksAfterItsLastAttempt(t *testing.T) {
	for name, step := range map[string]scripted.Step{
		"answer 503":             {Delay: 10 * time.Millisecond, Status: 503},
		"error connection_reset": {Delay: 10 * time.Millisecond, Err: syscall.ECONNRESET},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, logs := newLogHarness(t, []scripted.Step{step}, otelretry.WithMaxAttempts(1),
					otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
						time.Sleep(200 * time.Millisecond) // a lookup
						return otelretry.Classification{}
					}))
				if resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/")); err == nil {
					resp.Body.Close()
				}
				logged := int64(-1)
				for _, rec := range logs.named("retry.operation") {
					logged = recordAttrs(rec)["retry.operation.duration_ms"].AsInt64()
				}
				if took := histogramSums(h.collect(t))["retry.operation.duration"]; took != 0.21 || logged != 210 {
					t.Errorf("retry.operation.duration %vs, retry.operation.duration_ms %d; want the 210 ms RoundTrip took", took, logged)
				}
			})
		})
	}
}

// An operation that runs to the default deadline (30 s: three attempts
// the default attempt timeout cuts) falls in a finite bucket of
// retry.operation.duration: the buckets ended at 10 s, where a dashboard's
// histogram_quantile could only answer 10 s for it.
func TestAnOperationOfTheDefaultDeadlineFallsInAFiniteBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}})
		if resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/")); err == nil {
			resp.Body.Close()
		}
		for _, sm := range h.collect(t).ScopeMetrics {
			for _, m := range sm.Metrics {
				hist, ok := m.Data.(metricdata.Histogram[float64])
				if !ok || m.Name != "retry.operation.duration" {
					continue
				}
				for _, dp := range hist.DataPoints {
					if dp.Sum != 30 || dp.BucketCounts[len(dp.BucketCounts)-1] != 0 || !slices.Contains(dp.Bounds, 30) {
						t.Errorf("an operation of %vs in bounds %v, counts %v; want it in the bucket up to 30 s", dp.Sum, dp.Bounds, dp.BucketCounts)
					}
				}
				return
			}
		}
		t.Error("no retry.operation.duration")
	})
}

// docs/telemetry.md, Logs: without an SDK TracerProvider, the records
// carry the ids of the span the request's context holds, the caller's,
// and none when it holds none. The page said they carry none (a
// reviewer's find).
func TestWithoutSpansTheRecordsCarryTheCallersIDs(t *testing.T) {
	caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	for _, sc := range []trace.SpanContext{caller, {}} {
		var buf bytes.Buffer
		rec := &logRecorder{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(rec))
		rt := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			otelretry.WithLoggerProvider(lp))
		resp, err := rt.RoundTrip(get(t, trace.ContextWithRemoteSpanContext(t.Context(), sc), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_ = lp.Shutdown(context.Background())
		wantTrace, wantSpan := "", ""
		if sc.IsValid() {
			wantTrace, wantSpan = sc.TraceID().String(), sc.SpanID().String()
		}
		records := slogRecords(t, &buf, "retry attempt")
		if len(records) != 2 {
			t.Fatalf("%d slog attempt records, want 2", len(records))
		}
		for _, r := range records {
			gotTrace, _ := r["trace_id"].(string)
			if gotSpan, _ := r["span_id"].(string); gotTrace != wantTrace || gotSpan != wantSpan {
				t.Errorf("caller %v: slog record ids %v %v, want %q %q", sc.IsValid(), r["trace_id"], r["span_id"], wantTrace, wantSpan)
			}
		}
		rec.mu.Lock()
		for _, r := range rec.records {
			if r.TraceID() != sc.TraceID() || r.SpanID() != sc.SpanID() {
				t.Errorf("caller %v: event %s ids %s %s, want %s %s", sc.IsValid(), r.EventName(), r.TraceID(), r.SpanID(), sc.TraceID(), sc.SpanID())
			}
		}
		if len(rec.records) != 3 {
			t.Errorf("%d log events, want 3 (two attempts, one operation)", len(rec.records))
		}
		rec.mu.Unlock()
	}
}
