// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The content floor: retryablehttp-otelhttp that also writes, by hand, the
// telemetry otelretry-sdk writes for a successful GET, and nothing else: the
// operation span's attributes (five at start, three at its end), the
// attempt event's fields on otelhttp's CLIENT span after otelhttp's own
// response attributes (the sanitized url.full among them, and
// retry.wire.writes where the base is net/http's), and the five records of
// the metrics.Recorder, with the same exemplar context. It has none of
// otelretry's bounds (deadline, attempt timeout), decisions, retry budget,
// wire-write counting or resend guard. So otelretry-sdk over this case is
// the price of otelretry's own work, and this case over
// retryablehttp-otelhttp is the price of the content the span and metric
// contracts require, measured on the same path instead of summed from
// BenchmarkSDKParts.

// floorKey finds an operation's floorOp in a request's context.
type floorKey struct{}

// floorOp is what the hand-written content needs from its operation. It is
// also the request's context (the operation span's, plus itself as the
// value of floorKey), so that it costs one allocation, as otelretry's
// attempt context is part of its operation record.
type floorOp struct {
	context.Context
	id       string
	start    time.Time
	attempts int
	span     trace.Span // the attempt's CLIENT span, caught inside otelhttp
	// kv is the attribute buffer of the operation's SetAttributes calls,
	// lent by floorBuffers as otelretry lends its operations theirs (the
	// spans copy what they are given).
	kv *[10]attribute.KeyValue
}

func (op *floorOp) Value(key any) any {
	if key == (floorKey{}) {
		return op
	}
	return op.Context.Value(key)
}

// floorBuffers lends floorOp its attribute buffer.
var floorBuffers = sync.Pool{New: func() any { return new([10]attribute.KeyValue) }}

// contentFloor builds the case over base for requests to rawURL. It writes
// retry.wire.writes (1: the request was written once) when base is an
// *http.Transport, as otelretry does for a base that reports its writes.
func contentFloor(tb testing.TB, base http.RoundTripper, rawURL string) built {
	s := newSDK(tb)
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	rec, err := metrics.NewRecorder(s.mp.Meter("floor"))
	if err != nil {
		tb.Fatal(err)
	}
	const deadline = 30 * time.Second
	clean := otelretry.SanitizeURL(u)
	host := u.Hostname()
	port := 80
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	// otelhttp leaves the scheme's default port off its CLIENT span, and
	// otelretry writes it there (appendDefaultPort).
	defaultPort := 0
	if port == 80 && u.Scheme == "http" || port == 443 && u.Scheme == "https" {
		defaultPort = port
	}
	_, writes := base.(*http.Transport)
	tracer := s.tp.Tracer("floor")
	internal := trace.WithSpanKind(trace.SpanKindInternal)
	rt := newRetryableTransport(floorFields{
		next: s.otelhttp(floorCatch{base}), rec: rec, clean: clean, deadline: deadline, writes: writes, defaultPort: defaultPort,
	})
	return built{op: func() error {
		op := &floorOp{id: otelretry.NewOperationID(), start: time.Now(), kv: floorBuffers.Get().(*[10]attribute.KeyValue)}
		defer floorBuffers.Put(op.kv)
		kv := append(op.kv[:0],
			attrs.OperationIDKey.String(op.id), attrs.HTTPRequestMethodKey.String(http.MethodGet),
			attrs.URLFullKey.String(clean), attrs.ServerAddressKey.String(host), attrs.ServerPortKey.Int(port))
		ctx, span := tracer.Start(context.Background(), "retry GET", internal, trace.WithAttributes(kv...))
		op.Context = ctx
		err := roundTrip(rt, op, rawURL)
		span.SetAttributes(append(op.kv[:0], attrs.DeadlineMsKey.Int64(deadline.Milliseconds()),
			attrs.AttemptsKey.Int(op.attempts), attrs.OutcomeReturn.Attribute())...)
		span.End()
		rec.RecordOperation(ctx, metrics.Operation{Method: http.MethodGet, Outcome: attrs.OutcomeReturn,
			Attempts: op.attempts, Duration: time.Since(op.start)})
		return err
	}, spans: s.spans, sdk: s}
}

// floorCatch sits inside otelhttp and hands the CLIENT span to floorFields.
type floorCatch struct{ base http.RoundTripper }

func (c floorCatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if op, ok := r.Context().Value(floorKey{}).(*floorOp); ok {
		op.span = trace.SpanFromContext(r.Context())
	}
	return c.base.RoundTrip(r)
}

// floorFields sits around otelhttp and writes the attempt event of a
// successful attempt once otelhttp has written its response attributes,
// then records the attempt's metrics.
type floorFields struct {
	next        http.RoundTripper
	rec         *metrics.Recorder
	clean       string
	deadline    time.Duration
	writes      bool
	defaultPort int // the scheme's default port the URL names, else 0
}

func (f floorFields) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.Context().Value(floorKey{}).(*floorOp)
	op.attempts++
	sent := time.Since(op.start)
	resp, err := f.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	elapsed := time.Since(op.start) - sent
	kv := append(op.kv[:0],
		attrs.OperationIDKey.String(op.id), attrs.RequestIDKey.String(otelretry.RequestID(op.id, op.attempts)),
		attrs.AttemptKey.Int(op.attempts), attrs.URLFullKey.String(f.clean),
		attrs.RemainingMsKey.Int64((f.deadline - sent).Milliseconds()), attrs.ElapsedMsKey.Int64(elapsed.Milliseconds()),
		attrs.DecisionReturn.Attribute(), attrs.ReasonResponse.Attribute())
	if f.defaultPort != 0 {
		kv = append(kv, attrs.ServerPortKey.Int(f.defaultPort))
	}
	if f.writes {
		kv = append(kv, attrs.WireWritesKey.Int(1))
	}
	op.span.SetAttributes(kv...)
	f.rec.RecordAttempt(r.Context(), metrics.Attempt{Method: http.MethodGet, Decision: attrs.DecisionReturn,
		StatusCode: resp.StatusCode, Duration: elapsed})
	return resp, nil
}

// TestContentFloorWritesWhatOtelretryWrites holds the content floor to
// otelretry-sdk's telemetry, in memory and on loopback: the same spans
// (kind, attributes with their values, events, status; ids and
// millisecond readings are compared by key only, and span names are left
// out: the peer's otelhttp names its spans "HTTP GET"), and the same
// retry.* series with the same number of records each, so that the floor
// cannot drift from what it prices.
func TestContentFloorWritesWhatOtelretryWrites(t *testing.T) {
	srv := newLoopbackServer()
	defer srv.Close()
	for _, setting := range []struct {
		name string
		base func() http.RoundTripper
		url  string
	}{
		{"in memory", func() http.RoundTripper { return newMemTransport(http.StatusOK) }, "http://api.example.test/v1/items?id=42"},
		{"loopback", func() http.RoundTripper { return newLoopbackTransport() }, srv.URL + "/v1/items?id=42"},
	} {
		t.Run(setting.name, func(t *testing.T) {
			shapes := map[string]telemetryShape{}
			for _, name := range []string{"otelretry-sdk", "retryablehttp-otelhttp-content"} {
				shapes[name] = shapeOf(t, name, setting.base(), setting.url)
			}
			ours, floor := shapes["otelretry-sdk"], shapes["retryablehttp-otelhttp-content"]
			if len(ours.spans) != 2 || !slices.Equal(ours.spans, floor.spans) {
				t.Errorf("spans differ:\notelretry-sdk %q\nfloor         %q", ours.spans, floor.spans)
			}
			for _, name := range slices.Sorted(maps.Keys(ours.metrics)) {
				if got, want := floor.metrics[name], ours.metrics[name]; got != want {
					t.Errorf("metric %s: floor labels %q, otelretry-sdk %q", name, got, want)
				}
			}
			if len(floor.metrics) != len(ours.metrics) || len(ours.metrics) < 5 {
				t.Errorf("metrics: floor %d, otelretry-sdk %d (want the same five retry instruments)", len(floor.metrics), len(ours.metrics))
			}
		})
	}
}

// telemetryShape is what one operation of a case wrote: each span as
// "kind attributes events status", sorted, and each retry.* instrument's
// series with their record counts.
type telemetryShape struct {
	spans   []string
	metrics map[string]string
}

// variesPerRun are the attributes whose values differ from one operation to
// the next: they are compared by key.
var variesPerRun = map[attribute.Key]bool{
	attrs.OperationIDKey: true, attrs.RequestIDKey: true, attrs.RemainingMsKey: true, attrs.ElapsedMsKey: true,
}

func shapeOf(t *testing.T, name string, base http.RoundTripper, rawURL string) telemetryShape {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	extraProcessor = rec
	defer func() { extraProcessor = nil }()
	i := slices.IndexFunc(cases, func(c caseDef) bool { return c.name == name })
	bc := cases[i].build(t, base, rawURL, success)
	if err := bc.op(); err != nil {
		t.Fatal(err)
	}
	var shape telemetryShape
	for _, s := range rec.Ended() {
		kv := make([]string, 0, len(s.Attributes()))
		for _, a := range s.Attributes() {
			v := a.Value.Emit()
			if variesPerRun[a.Key] {
				v = "*"
			}
			kv = append(kv, string(a.Key)+"="+v)
		}
		slices.Sort(kv)
		var events []string
		for _, e := range s.Events() {
			events = append(events, e.Name)
		}
		shape.spans = append(shape.spans, fmt.Sprintf("%s [%s] events=%q status=%s", s.SpanKind(), strings.Join(kv, " "), events, s.Status().Code))
	}
	slices.Sort(shape.spans)
	var rm metricdata.ResourceMetrics
	if err := bc.sdk.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	shape.metrics = map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if strings.HasPrefix(m.Name, "retry.") {
				shape.metrics[m.Name] = series(m.Data)
			}
		}
	}
	return shape
}

// series lists the labels of each data point of a sum or histogram with
// its count of records (a sum's value: the retry counters add 1 per
// record).
func series(data metricdata.Aggregation) string {
	var out []string
	point := func(set attribute.Set, n uint64) {
		var labels []string
		for _, kv := range set.ToSlice() {
			labels = append(labels, string(kv.Key)+"="+kv.Value.Emit())
		}
		out = append(out, fmt.Sprintf("%s n=%d", strings.Join(labels, ","), n))
	}
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			point(p.Attributes, uint64(p.Value))
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			point(p.Attributes, p.Count)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			point(p.Attributes, p.Count)
		}
	default:
		out = append(out, fmt.Sprintf("unexpected aggregation %T", data))
	}
	slices.Sort(out)
	return strings.Join(out, " | ")
}
