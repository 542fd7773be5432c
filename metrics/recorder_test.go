// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

const scope = "test/scope"

func newRecorder(t testing.TB) (*metrics.Recorder, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rec, err := metrics.NewRecorder(mp.Meter(scope))
	if err != nil {
		t.Fatal(err)
	}
	return rec, reader
}

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func set(kv ...attribute.KeyValue) attribute.Set { return attribute.NewSet(kv...) }

// The histograms' bucket boundaries, a contract docs/telemetry.md and the
// dashboards state: attempts per operation are small integers, durations
// take the HTTP semantic conventions' boundaries, in seconds.
var (
	attemptBuckets  = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10}
	durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 30, 60, 120}
)

var (
	get     = attrs.HTTPRequestMethodKey.String("GET")
	retry   = attrs.DecisionRetry.Attribute()
	ret     = attrs.DecisionReturn.Attribute()
	outcome = attrs.OutcomeReturn.Attribute()
)

// The seed's read timeline, recorded by hand: 503, 503, 200 with two 40ms
// pauses.
func recordSeed(rec *metrics.Recorder) {
	ctx := context.Background()
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, Duration: 80 * time.Millisecond})
	rec.RecordBackoff(ctx, metrics.Backoff{Method: "GET", Duration: 40 * time.Millisecond})
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, Duration: 80 * time.Millisecond})
	rec.RecordBackoff(ctx, metrics.Backoff{Method: "GET", Duration: 40 * time.Millisecond})
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn, StatusCode: 200, Duration: 50 * time.Millisecond})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeReturn, Attempts: 3, Duration: 290 * time.Millisecond})
}

func TestInstruments(t *testing.T) {
	rec, reader := newRecorder(t)
	recordSeed(rec)
	got := collect(t, reader)

	hist := func(count uint64, sum float64, bounds []float64, bucketCounts []uint64, min, max float64, s attribute.Set) metricdata.HistogramDataPoint[float64] {
		return metricdata.HistogramDataPoint[float64]{Attributes: s, Count: count, Sum: sum, Bounds: bounds, BucketCounts: bucketCounts,
			Min: metricdata.NewExtrema(min), Max: metricdata.NewExtrema(max)}
	}
	want := []metricdata.Metrics{
		{Name: "retry.operations", Description: "Logical operations completed, by terminal outcome.", Unit: "{operation}",
			Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
				{Attributes: set(get, outcome), Value: 1}}}},
		{Name: "retry.attempts", Description: "Network attempts made, by the client's decision after each.", Unit: "{attempt}",
			Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
				{Attributes: set(get, retry, attrs.HTTPResponseStatusCodeKey.Int(503)), Value: 2},
				{Attributes: set(get, ret, attrs.HTTPResponseStatusCodeKey.Int(200)), Value: 1}}}},
		{Name: "retry.operation.attempts", Description: "Network attempts per logical operation.", Unit: "{attempt}",
			Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{{
				Attributes: set(get, outcome), Count: 1, Sum: 3, Bounds: attemptBuckets,
				BucketCounts: []uint64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, Min: metricdata.NewExtrema[int64](3), Max: metricdata.NewExtrema[int64](3)}}}},
		{Name: "retry.operation.duration", Description: "Duration of logical operations, backoff included.", Unit: "s",
			Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{
				hist(1, 0.29, durationBuckets, []uint64{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.29, 0.29, set(get, outcome))}}},
		{Name: "retry.attempt.duration", Description: "Duration of single network attempts, until response headers or failure.", Unit: "s",
			Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{
				hist(2, 0.16, durationBuckets, []uint64{0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.08, 0.08, set(get, retry)),
				hist(1, 0.05, durationBuckets, []uint64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.05, 0.05, set(get, ret))}}},
		{Name: "retry.backoff.duration", Description: "Pauses taken before retries.", Unit: "s",
			Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{
				hist(2, 0.08, durationBuckets, []uint64{0, 0, 0, 1 + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.04, 0.04, set(get))}}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d instruments, want %d", len(got), len(want))
	}
	for _, w := range want {
		metricdatatest.AssertEqual(t, w, got[w.Name], metricdatatest.IgnoreTimestamp())
	}
}

func TestErrorClassLabelAndNoStatus(t *testing.T) {
	rec, reader := newRecorder(t)
	rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "POST", Decision: attrs.DecisionCheckState, ErrorClass: attrs.ErrorClassTimeout, Duration: time.Millisecond})
	sum := collect(t, reader)["retry.attempts"].Data.(metricdata.Sum[int64])
	want := set(attrs.HTTPRequestMethodKey.String("POST"), attrs.DecisionCheckState.Attribute(), attrs.ErrorClassTimeout.Attribute())
	if len(sum.DataPoints) != 1 || !sum.DataPoints[0].Attributes.Equals(&want) {
		t.Fatalf("attempt labels = %v, want %v", sum.DataPoints[0].Attributes.ToSlice(), want.ToSlice())
	}
}

// The caller decides server.address (the transport, by its option): the
// Recorder labels exactly what it is given.
func TestServerAddressOnlyWhenGiven(t *testing.T) {
	for _, server := range []string{"", "api.test"} {
		rec, reader := newRecorder(t)
		rec.RecordOperation(context.Background(), metrics.Operation{Method: "GET", ServerAddress: server, Outcome: attrs.OutcomeReturn, Attempts: 1})
		dp := collect(t, reader)["retry.operations"].Data.(metricdata.Sum[int64]).DataPoints[0]
		if v, has := dp.Attributes.Value(attrs.ServerAddressKey); has != (server != "") || (has && v.AsString() != server) {
			t.Errorf("ServerAddress=%q: server.address = %v (present %v)", server, v.Emit(), has)
		}
	}
}

// error.type labels the duration histograms only, and only when set.
func TestErrorTypeLabelsDurationsOnly(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, ErrorType: "503", Duration: time.Millisecond})
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeMaxAttempts, ErrorType: "503", Attempts: 3, Duration: time.Millisecond})
	got := collect(t, reader)
	for _, name := range []string{"retry.attempt.duration", "retry.operation.duration"} {
		for _, dp := range got[name].Data.(metricdata.Histogram[float64]).DataPoints {
			v, has := dp.Attributes.Value(attrs.ErrorTypeKey)
			_, isReturn := dp.Attributes.Value(attrs.DecisionKey)
			if d, _ := dp.Attributes.Value(attrs.DecisionKey); isReturn && d.AsString() == "return" {
				if has {
					t.Errorf("%s: a success carries error.type %q", name, v.AsString())
				}
				continue
			}
			if !has || v.AsString() != "503" {
				t.Errorf("%s %v: error.type = %q (present %v), want 503", name, dp.Attributes.ToSlice(), v.AsString(), has)
			}
		}
	}
	for _, name := range []string{"retry.attempts", "retry.operations"} {
		for _, dp := range got[name].Data.(metricdata.Sum[int64]).DataPoints {
			if _, has := dp.Attributes.Value(attrs.ErrorTypeKey); has {
				t.Errorf("%s carries error.type", name)
			}
		}
	}
	for _, dp := range got["retry.operation.attempts"].Data.(metricdata.Histogram[int64]).DataPoints {
		if _, has := dp.Attributes.Value(attrs.ErrorTypeKey); has {
			t.Errorf("retry.operation.attempts carries error.type")
		}
	}
}

// User labels never carry ids (an idempotency key's value too: it was kept
// before), URLs or the Recorder's own keys.
func TestNewLabelsDropsURLsIDsAndOwnKeys(t *testing.T) {
	set := metrics.NewLabels(
		attribute.String("dependency", "orders"),
		attribute.String("url.query", "token=secret"), attribute.String("url.full", "http://x/?a=1"),
		attribute.String("url.path", "/users/42"), attribute.String("http.url", "http://x/?a=1"),
		attribute.String("http.target", "/?a=1"), attrs.OperationIDKey.String("op-1"),
		attrs.RequestIDKey.String("op-1/attempt-1"), attrs.IdempotencyKeyValueKey.String("key-7f3a9c"),
		attrs.OutcomeKey.String("stop"),
		attrs.ErrorTypeKey.String("x"), attrs.ReasonKey.String("budget"))
	if set.Len() != 1 {
		t.Fatalf("kept %v, want only dependency", set.ToSlice())
	}
	// With blanks or dots around them, they are still what they say:
	// " url.full" was kept, as the label _url_full (a reviewer's find).
	set = metrics.NewLabels(attribute.String(" url.full", "http://x/?a=1"), attribute.String(".url", "http://x/"),
		attribute.String("retry.operation.id ", "op-1"), attribute.String("_http.target_", "/?a=1"))
	if set.Len() != 0 {
		t.Fatalf("kept %v, want none", set.ToSlice())
	}
}

// A key that Prometheus spells as one of the Recorder's labels (the dots
// become underscores), or as a label the exporter writes itself, would
// join its values to the Recorder's (retry_outcome="deadline_exceeded;a":
// the dashboards' selectors miss it) or write le twice on every bucket
// (job and instance, which the Collector's exporter writes on every
// series, twice on every series, which it then drops); one
// Prometheus keeps for itself (__name__, any "__" name) or that escapes
// to underscores alone makes the exporter drop every series it labels.
func TestNewLabelsDropsKeysThatAreTheRecordersOwnInPrometheus(t *testing.T) {
	for _, key := range []string{"retry_outcome", "retry_decision", "http_request_method", "http-request-method",
		"server_address", "error_type", "retry_error_class", "http_response_status_code", "le", "quantile", "otel.scope.name",
		"retry__outcome", "retry._outcome", "http..request.method", "retry·outcome", "retry/.outcome", "__retry.outcome__",
		"otel.scope.attr", "otel_scope_team", "__name__", "__tier__", ".", "_", "..tier", "job", "instance"} {
		if set := metrics.NewLabels(attribute.String(key, "tier-a")); set.Len() != 0 {
			t.Errorf("NewLabels kept %q", key)
		}
	}
	if set := metrics.NewLabels(attribute.String("tier", "a"), attribute.String("retry_tier", "b")); set.Len() != 2 {
		t.Errorf("kept %v, want both tier keys", set.ToSlice())
	}
}

// A method outside the standard set labels its series _OTHER, so a client
// sending arbitrary methods cannot create unbounded series; an empty one is
// GET, as net/http sends it.
func TestMethodLabelBoundsCardinality(t *testing.T) {
	for in, want := range map[string]string{"GET": "GET", "": "GET", "PATCH": "PATCH", "CONNECT": "CONNECT",
		"BREW": "_OTHER", "get": "_OTHER"} {
		rec, reader := newRecorder(t)
		ctx := context.Background()
		rec.RecordAttempt(ctx, metrics.Attempt{Method: in, Decision: attrs.DecisionRetry, StatusCode: 503, Duration: time.Millisecond})
		rec.RecordBackoff(ctx, metrics.Backoff{Method: in, Duration: time.Millisecond})
		rec.RecordOperation(ctx, metrics.Operation{Method: in, Outcome: attrs.OutcomeReturn, Attempts: 2, Duration: time.Millisecond})
		got := collect(t, reader)
		if len(got) != 6 {
			t.Fatalf("method %q: %d instruments recorded, want 6 (retry.throttled records nothing here)", in, len(got))
		}
		for name, m := range got {
			var labels []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					labels = append(labels, dp.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					labels = append(labels, dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					labels = append(labels, dp.Attributes)
				}
			}
			if len(labels) != 1 {
				t.Fatalf("method %q: %s has %d series, want 1", in, name, len(labels))
			}
			if v, _ := labels[0].Value(attrs.HTTPRequestMethodKey); v.AsString() != want {
				t.Errorf("method %q: %s labels http.request.method=%q, want %q", in, name, v.AsString(), want)
			}
		}
	}
}

func TestNilMeterRecordsNothingAndDoesNotPanic(t *testing.T) {
	rec, err := metrics.NewRecorder(nil)
	if err != nil {
		t.Fatal(err)
	}
	recordSeed(rec)
}

func TestWarmRecordingDoesNotAllocate(t *testing.T) {
	rec, _ := newRecorder(t)
	recordSeed(rec) // warm the attribute sets
	if n := testing.AllocsPerRun(200, func() { recordSeed(rec) }); n != 0 {
		t.Fatalf("recording one warm operation allocated %v times, want 0", n)
	}
}

func BenchmarkRecordOperation(b *testing.B) {
	rec, _ := newRecorder(b)
	recordSeed(rec)
	b.ReportAllocs()
	for b.Loop() {
		recordSeed(rec)
	}
}

func BenchmarkRecordAttempt(b *testing.B) {
	rec, _ := newRecorder(b)
	ctx := context.Background()
	a := metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, Duration: 80 * time.Millisecond}
	rec.RecordAttempt(ctx, a)
	b.ReportAllocs()
	for b.Loop() {
		rec.RecordAttempt(ctx, a)
	}
}

func BenchmarkRecordOperationParallel(b *testing.B) {
	rec, _ := newRecorder(b)
	recordSeed(rec)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			recordSeed(rec)
		}
	})
}

// A Recorder on a nil or no-op meter records nothing and needs nothing.
func TestRecorderOnNoopMeter(t *testing.T) {
	for name, m := range map[string]metric.Meter{"nil": nil, "noop": noop.NewMeterProvider().Meter(scope)} {
		rec, err := metrics.NewRecorder(m)
		if err != nil || rec == nil {
			t.Fatalf("%s: NewRecorder = %v, %v", name, rec, err)
		}
		recordSeed(rec)
		rec.RecordOperation(context.Background(), metrics.Operation{Method: "PATCH", Outcome: attrs.OutcomeStop, Attempts: 1})
	}
}

func TestWarmRecordingWithLabelsDoesNotAllocate(t *testing.T) {
	rec, _ := newRecorder(t)
	labels := metrics.NewLabels(attribute.String("dependency", "orders"))
	record := func() {
		ctx := context.Background()
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: labels, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
		rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Labels: labels, Outcome: attrs.OutcomeReturn, Attempts: 1, Duration: time.Millisecond})
	}
	record()
	if n := testing.AllocsPerRun(200, record); n != 0 {
		t.Fatalf("warm recording with labels allocated %v times, want 0", n)
	}
}

// A request a client-side throttle refused counts on retry.throttled, by
// method (and server.address when given), so that its share of the
// requests (with retry.attempts) is the throttle's rejection rate.
func TestRecordThrottled(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	for range 3 {
		rec.RecordThrottled(ctx, metrics.Throttled{Method: "GET"})
	}
	rec.RecordThrottled(ctx, metrics.Throttled{Method: "POST", ServerAddress: "api.test"})
	m, ok := collect(t, reader)["retry.throttled"]
	if !ok || m.Unit != "{request}" {
		t.Fatalf("retry.throttled: %+v", m)
	}
	got := map[attribute.Distinct]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		got[dp.Attributes.Equivalent()] = dp.Value
	}
	byGet, post := set(get), set(attrs.HTTPRequestMethodKey.String("POST"), attrs.ServerAddressKey.String("api.test"))
	if len(got) != 2 || got[byGet.Equivalent()] != 3 || got[post.Equivalent()] != 1 {
		t.Errorf("retry.throttled = %v", got)
	}
}

// A Meter may return a working instrument with an error: the SDK's does
// when one of its readers cannot aggregate it, and the instrument records
// for the other readers. The Recorder keeps it (and reports the error):
// it replaced it with a no-op, so one misconfigured reader took
// retry.operations, retry.attempts and retry.throttled from every healthy
// one.
func TestOneReaderThatRejectsAnInstrumentLeavesTheOthersTheirData(t *testing.T) {
	healthy := sdkmetric.NewManualReader()
	rejectsCounters := sdkmetric.NewManualReader(sdkmetric.WithAggregationSelector(func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
		if k == sdkmetric.InstrumentKindCounter {
			return sdkmetric.AggregationLastValue{} // not valid for a counter
		}
		return sdkmetric.DefaultAggregationSelector(k)
	}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(healthy), sdkmetric.WithReader(rejectsCounters))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	rec, err := metrics.NewRecorder(mp.Meter(scope))
	if err == nil {
		t.Fatal("NewRecorder reported no error for counters a reader rejects")
	}
	recordSeed(rec)
	rec.RecordThrottled(context.Background(), metrics.Throttled{Method: "GET"})
	got := collect(t, healthy)
	for _, name := range []string{"retry.operations", "retry.attempts", "retry.throttled", "retry.operation.attempts"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: nothing recorded for the healthy reader", name)
		}
	}
}

// wrappingCounter is a Meter adapter's counter, which forwards to the
// instrument it wraps; its constructor returns a nil *wrappingCounter with
// its error when it cannot make one (`return c, err`).
type wrappingCounter struct {
	embedded.Int64Counter
	next metric.Int64Counter
}

func (c *wrappingCounter) Add(ctx context.Context, v int64, opts ...metric.AddOption) {
	c.next.Add(ctx, v, opts...)
}

func (c *wrappingCounter) Enabled(ctx context.Context) bool { return c.next.Enabled(ctx) }

// rejectingMeter cannot make counters: it returns a nil *wrappingCounter
// with its error.
type rejectingMeter struct{ noop.Meter }

func (rejectingMeter) Int64Counter(name string, _ ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	var c *wrappingCounter
	return c, errors.New("adapter: counter " + name + " rejected")
}

// A Meter that made no instrument, returning a nil pointer with its error,
// leaves the Recorder a no-op: kept, the nil instrument panicked on the
// first record, out of RoundTrip.
func TestAMeterThatReturnsANilInstrumentWithItsErrorLeavesANoop(t *testing.T) {
	rec, err := metrics.NewRecorder(rejectingMeter{})
	if err == nil {
		t.Fatal("NewRecorder reported no error")
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("recording panicked: %v", r)
		}
	}()
	recordSeed(rec)
	rec.RecordThrottled(context.Background(), metrics.Throttled{Method: "GET"})
}
