// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// discardExporter is a log exporter that counts the records it is given
// and drops them.
type discardExporter struct{ records atomic.Int64 }

func (e *discardExporter) Export(_ context.Context, rs []sdklog.Record) error {
	e.records.Add(int64(len(rs)))
	return nil
}
func (*discardExporter) Shutdown(context.Context) error   { return nil }
func (*discardExporter) ForceFlush(context.Context) error { return nil }

// newLogSDK is a real LoggerProvider: the SDK's batch processor (its
// defaults: a 2048-record queue, batches of 512, a 1 s interval) over a
// discarding exporter.
func newLogSDK(tb testing.TB) (*sdklog.LoggerProvider, *discardExporter) {
	exp := &discardExporter{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	tb.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp, exp
}

// logCase is one case of BenchmarkLogEvents.
type logCase struct {
	name string
	// logs: "off" (no log events), "events" (WithLoggerProvider), or
	// "direct" (no log events; the same records emitted by hand through
	// the same SDK after each operation: the baseline).
	logs    string
	tracing string // "sdk" (the otelretry-sdk case's providers) or "noop"
}

var logCases = []logCase{
	{"sdk-off", "off", "sdk"},
	{"sdk-direct", "direct", "sdk"},
	{"sdk-events", "events", "sdk"},
	{"noop-off", "off", "noop"},
	{"noop-direct", "direct", "noop"},
	{"noop-events", "events", "noop"},
}

// directRecords emits by hand, through logger, the records the transport
// emits for an operation of the given attempts that ends in a 200 after
// 503s, with the same attributes (values of the same sizes), severities,
// event names and bodies, each in a context carrying a span context as the
// transport's do. The attribute lists are built once: the baseline pays
// only for the records.
type directRecords struct {
	logger   log.Logger
	ctx      context.Context
	attempts [][]attribute.KeyValue
	sevs     []log.Severity
	op       []attribute.KeyValue
}

func newDirectRecords(logger log.Logger, attempts int) *directRecords {
	const id = "op-1f3a9c0d5e7b2a64"
	const url = "http://api.example.test/v1/items?id=REDACTED"
	d := &directRecords{logger: logger}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	d.ctx = trace.ContextWithSpanContext(context.Background(), sc)
	for n := 1; n <= attempts; n++ {
		kv := []attribute.KeyValue{
			attrs.OperationIDKey.String(id), attrs.RequestIDKey.String(otelretry.RequestID(id, n)), attrs.AttemptKey.Int(n),
			attrs.HTTPRequestMethodKey.String("GET"), attrs.URLFullKey.String(url), attrs.RemainingMsKey.Int64(30000),
		}
		if n > 1 {
			kv = append(kv, attrs.HTTPRequestResendCountKey.Int(n-1))
		}
		if n < attempts {
			kv = append(kv, attrs.HTTPResponseStatusCodeKey.Int(503), attrs.ErrorTypeKey.String("503"), attrs.ElapsedMsKey.Int64(0),
				attrs.DecisionRetry.Attribute(), attrs.ReasonRetryableStatus.Attribute(), attrs.BackoffMsKey.Int64(0))
			d.sevs = append(d.sevs, log.SeverityWarn)
		} else {
			kv = append(kv, attrs.HTTPResponseStatusCodeKey.Int(200), attrs.ElapsedMsKey.Int64(0),
				attrs.DecisionReturn.Attribute(), attrs.ReasonResponse.Attribute())
			d.sevs = append(d.sevs, log.SeverityInfo)
		}
		d.attempts = append(d.attempts, kv)
	}
	d.op = []attribute.KeyValue{
		attrs.OperationIDKey.String(id), attrs.HTTPRequestMethodKey.String("GET"), attrs.URLFullKey.String(url),
		attrs.ServerAddressKey.String("api.example.test"), attrs.ServerPortKey.Int(80), attrs.DeadlineMsKey.Int64(30000),
		attrs.AttemptsKey.Int(attempts), attrs.OutcomeReturn.Attribute(), attrs.ReasonResponse.Attribute(),
		attrs.OperationDurationMsKey.Int64(0),
	}
	return d
}

func (d *directRecords) emit() {
	now := time.Now()
	for i, kv := range d.attempts {
		var r log.Record
		r.SetEventName(attrs.LogEventAttempt)
		r.SetTimestamp(now)
		r.SetSeverity(d.sevs[i])
		r.SetSeverityText(d.sevs[i].String())
		r.SetBody(attribute.StringValue("retry attempt"))
		r.AddAttributes(kv...)
		d.logger.Emit(d.ctx, r)
	}
	var r log.Record
	r.SetEventName(attrs.LogEventOperation)
	r.SetTimestamp(now)
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetBody(attribute.StringValue("retry operation"))
	r.AddAttributes(d.op...)
	d.logger.Emit(d.ctx, r)
}

// build makes the case over base: otelretry with the tracing's providers,
// and the log events on, off, or emitted by hand.
// The LoggerProvider and its exporter come back too, for tests.
func (c logCase) build(tb testing.TB, base http.RoundTripper, url string, k kind, attempts int) (built, *sdklog.LoggerProvider, *discardExporter) {
	var opts []otelretry.Option
	var b built
	if c.tracing == "sdk" {
		s := newSDK(tb)
		opts = []otelretry.Option{otelretry.WithTracerProvider(s.tp), otelretry.WithMeterProvider(s.mp), otelretry.WithPropagators(s.prop)}
		b.spans, b.sdk = s.spans, s
	} else {
		opts = []otelretry.Option{
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		}
	}
	opts = append(opts, otelretryRetryOptions(k)...)
	lp, exp := newLogSDK(tb)
	var direct *directRecords
	switch c.logs {
	case "events":
		opts = append(opts, otelretry.WithLoggerProvider(lp))
	case "direct":
		direct = newDirectRecords(lp.Logger(otelretry.ScopeName), attempts)
	}
	rt := otelretry.NewTransport(base, opts...)
	b.op = func() error {
		err := roundTrip(rt, context.Background(), url)
		if direct != nil {
			direct.emit()
		}
		return err
	}
	return b, lp, exp
}

// operationKinds are the operations the tests and benchmarks run: one
// answered 200 at once, one retried after two 503s.
var operationKinds = []struct {
	name     string
	kind     kind
	statuses []int
}{
	{"success", success, []int{http.StatusOK}},
	{"retry3", retrying, []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK}},
}

// BenchmarkLogEvents prices the log events: otelretry with the SDK's
// LoggerProvider (batch processor, discarding exporter) against the same
// transport without them ("off") and against the baseline ("direct"): the
// transport without them plus the same records emitted straight through
// the same SDK. With the SDK's tracer and meter providers (the
// otelretry-sdk case's) and with the no-op ones, which leaves the records
// alone on top of the no-op path.
func BenchmarkLogEvents(b *testing.B) {
	for _, k := range operationKinds {
		for _, c := range logCases {
			b.Run("kind="+k.name+"/case="+c.name, func(b *testing.B) {
				base := newMemTransport(k.statuses...)
				bc, _, _ := c.build(b, unsized{base}, "http://api.example.test/v1/items?id=42", k.kind, len(k.statuses))
				run(b, bc, base, int64(len(k.statuses)))
			})
		}
	}
}

// unsized is the in-memory base with the length of its 503s' bodies
// unknown, as a chunked answer's. Their drain is bounded by the drain
// floor (drainPause) like a sized body's, and ends at once: no pause is
// timed.
type unsized struct{ *memTransport }

func (u unsized) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.memTransport.RoundTrip(req)
	if err == nil && resp.StatusCode != http.StatusOK {
		resp.ContentLength = -1
	}
	return resp, err
}

// TestLogCases checks that every case of BenchmarkLogEvents sends its
// operations and that the events and direct cases hand the exporter the
// same number of records: one per attempt and one per operation.
func TestLogCases(t *testing.T) {
	const ops = 3
	for _, statuses := range [][]int{{http.StatusOK}, {503, 503, http.StatusOK}} {
		k, name := success, "success"
		if len(statuses) > 1 {
			k, name = retrying, "retry3"
		}
		for _, c := range logCases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				base := newMemTransport(statuses...)
				bc, lp, exp := c.build(t, unsized{base}, "http://api.example.test/v1/items?id=42", k, len(statuses))
				for range ops {
					if err := bc.op(); err != nil {
						t.Fatal(err)
					}
				}
				if err := lp.ForceFlush(context.Background()); err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				if c.logs != "off" {
					want = int64(ops * (len(statuses) + 1))
				}
				if got := exp.records.Load(); got != want {
					t.Errorf("records exported = %d, want %d", got, want)
				}
			})
		}
	}
}
