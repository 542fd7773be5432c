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
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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
			opts: []otelretry.Option{otelretry.WithBudget(otelretry.NewBudget(otelretry.BudgetTokens(2)))},
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
