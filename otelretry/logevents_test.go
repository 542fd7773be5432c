// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	lognoop "go.opentelemetry.io/otel/log/noop"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// logRecorder is an sdk/log Processor that keeps a copy of every record.
type logRecorder struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (r *logRecorder) OnEmit(_ context.Context, rec *sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

func (*logRecorder) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (*logRecorder) Shutdown(context.Context) error                         { return nil }
func (*logRecorder) ForceFlush(context.Context) error                       { return nil }

func (r *logRecorder) named(name string) []sdklog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdklog.Record
	for _, rec := range r.records {
		if rec.EventName() == name {
			out = append(out, rec)
		}
	}
	return out
}

func recordAttrs(rec sdklog.Record) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	rec.WalkAttributes(func(kv attribute.KeyValue) bool {
		m[kv.Key] = kv.Value
		return true
	})
	return m
}

func newLogHarness(t *testing.T, steps []scripted.Step, opts ...otelretry.Option) (*harness, *logRecorder) {
	t.Helper()
	rec := &logRecorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(rec))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return newHarness(t, steps, append(opts, otelretry.WithLoggerProvider(lp))...), rec
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

func (discardProcessor) OnEmit(context.Context, *sdklog.Record) error           { return nil }
func (discardProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (discardProcessor) Shutdown(context.Context) error                         { return nil }
func (discardProcessor) ForceFlush(context.Context) error                       { return nil }

// TestLogEventAllocations pins what the log events add to an operation
// with no-op tracer and meter providers (see TestNoopPathAllocations):
// nothing without WithLoggerProvider, nothing with the no-op
// LoggerProvider (its Logger is never Enabled, so no record is built), and
// with the SDK's LoggerProvider 16 for an operation of one attempt and 32
// for one of three. A memory profile accounts for them: per record, the
// record's own storage for the attributes past the five it holds inline
// (1), the SDK's copy of the record (1) and the SDK's storage for those
// attributes, which it grows one attribute at a time (4); per attempt,
// its request id (1); per operation, its generated id and its sanitized
// URL (3), which a recording span would have made anyway. The SDK's share
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
		{"off/success", nil, []int{http.StatusOK}, 11},
		{"off/503,503,200", nil, []int{503, 503, 200}, 11 + 2*12},
		{"noop/success", []otelretry.Option{otelretry.WithLoggerProvider(lognoop.NewLoggerProvider())}, []int{http.StatusOK}, 11},
		{"noop/503,503,200", []otelretry.Option{otelretry.WithLoggerProvider(lognoop.NewLoggerProvider())}, []int{503, 503, 200}, 11 + 2*12},
		{"sdk/success", []otelretry.Option{otelretry.WithLoggerProvider(sdk)}, []int{http.StatusOK}, 11 + 16},
		{"sdk/503,503,200", []otelretry.Option{otelretry.WithLoggerProvider(sdk)}, []int{503, 503, 200}, 11 + 2*12 + 32},
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
