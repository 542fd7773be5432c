// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"context"
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

// floorOp is what the hand-written content needs from its operation.
type floorOp struct {
	id       string
	start    time.Time
	attempts int
	span     trace.Span // the attempt's CLIENT span, caught inside otelhttp
}

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
	_, writes := base.(*http.Transport)
	tracer := s.tp.Tracer("floor")
	internal := trace.WithSpanKind(trace.SpanKindInternal)
	rt := newRetryableTransport(floorFields{
		next: s.otelhttp(floorCatch{base}), rec: rec, clean: clean, deadline: deadline, writes: writes,
	})
	return built{op: func() error {
		op := &floorOp{id: otelretry.NewOperationID(), start: time.Now()}
		ctx, span := tracer.Start(context.Background(), "retry GET", internal, trace.WithAttributes(
			attrs.OperationIDKey.String(op.id), attrs.HTTPRequestMethodKey.String(http.MethodGet),
			attrs.URLFullKey.String(clean), attrs.ServerAddressKey.String(host), attrs.ServerPortKey.Int(port)))
		err := roundTrip(rt, context.WithValue(ctx, floorKey{}, op), rawURL)
		span.SetAttributes(attrs.DeadlineMsKey.Int64(deadline.Milliseconds()), attrs.AttemptsKey.Int(op.attempts),
			attrs.OutcomeReturn.Attribute())
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

// floorBuffers lends floorFields its attribute buffer, as otelretry lends
// its operations theirs: the span copies what it is given.
var floorBuffers = sync.Pool{New: func() any { return new([9]attribute.KeyValue) }}

// floorFields sits around otelhttp and writes the attempt event of a
// successful attempt once otelhttp has written its response attributes,
// then records the attempt's metrics.
type floorFields struct {
	next     http.RoundTripper
	rec      *metrics.Recorder
	clean    string
	deadline time.Duration
	writes   bool
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
	buf := floorBuffers.Get().(*[9]attribute.KeyValue)
	defer floorBuffers.Put(buf)
	kv := append(buf[:0],
		attrs.OperationIDKey.String(op.id), attrs.RequestIDKey.String(otelretry.RequestID(op.id, op.attempts)),
		attrs.AttemptKey.Int(op.attempts), attrs.URLFullKey.String(f.clean),
		attrs.RemainingMsKey.Int64((f.deadline - sent).Milliseconds()), attrs.ElapsedMsKey.Int64(elapsed.Milliseconds()),
		attrs.DecisionReturn.Attribute(), attrs.ReasonResponse.Attribute())
	if f.writes {
		kv = append(kv, attrs.WireWritesKey.Int(1))
	}
	op.span.SetAttributes(kv...)
	f.rec.RecordAttempt(r.Context(), metrics.Attempt{Method: http.MethodGet, Decision: attrs.DecisionReturn,
		StatusCode: resp.StatusCode, Duration: elapsed})
	return resp, nil
}

// TestContentFloorWritesWhatOtelretryWrites holds the content floor to
// otelretry-sdk's telemetry, in memory and on loopback: the same span
// kinds with the same attribute keys (span names are otelhttp's own, and
// the peer's otelhttp names its spans "HTTP GET"), and
// the same instruments with the same label keys, so that the floor cannot
// drift from what it prices.
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
// "kind keys", sorted, and each retry.* instrument's labels.
type telemetryShape struct {
	spans   []string
	metrics map[string]string
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
		keys := make([]string, 0, len(s.Attributes()))
		for _, kv := range s.Attributes() {
			keys = append(keys, string(kv.Key))
		}
		slices.Sort(keys)
		shape.spans = append(shape.spans, s.SpanKind().String()+" "+strings.Join(keys, ","))
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
				shape.metrics[m.Name] = labelKeys(m.Data)
			}
		}
	}
	return shape
}

// labelKeys lists the label keys of each data point of a sum or histogram.
func labelKeys(data metricdata.Aggregation) string {
	var sets []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	var out []string
	for _, set := range sets {
		var keys []string
		for _, kv := range set.ToSlice() {
			keys = append(keys, string(kv.Key)+"="+kv.Value.Emit())
		}
		out = append(out, strings.Join(keys, ","))
	}
	slices.Sort(out)
	return strings.Join(out, " | ")
}
