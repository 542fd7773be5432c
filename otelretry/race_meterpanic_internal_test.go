// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
)

// panickingMeterProvider is a user's MeterProvider whose histograms, recording a
// measurement of one of the statuses, take 10 ms and then panic (when
// panics is set): otelhttp records http.client.request.duration with it
// after the base returned, on the attempt's goroutine, after the race
// heard the answer and before its Classifier runs.
type panickingMeterProvider struct {
	embedded.MeterProvider
	statuses []int64
	panics   bool
}

func (p panickingMeterProvider) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return panickingMeter{Meter: sdkmetric.NewMeterProvider().Meter(name, o...), p: p}
}

type panickingMeter struct {
	metric.Meter
	p panickingMeterProvider
}

func (m panickingMeter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, err := m.Meter.Float64Histogram(name, o...)
	return panickingHistogram{Float64Histogram: h, p: m.p}, err
}

type panickingHistogram struct {
	metric.Float64Histogram
	p panickingMeterProvider
}

func (h panickingHistogram) Record(ctx context.Context, v float64, o ...metric.RecordOption) {
	set := metric.NewRecordConfig(o).Attributes()
	if s, ok := set.Value(semconv.HTTPResponseStatusCodeKey); ok && slices.Contains(h.p.statuses, s.AsInt64()) {
		time.Sleep(10 * time.Millisecond)
		if h.p.panics {
			panic("meter")
		}
	}
	h.Float64Histogram.Record(ctx, v, o...)
}

// TestAnAnswerHeardAfterASuccessStaysSupersededWhenThatSuccessPanics:
// attempt 1's 200 is heard at 30 ms; its hedge (sent at 20 ms) answers
// 503 at 32 ms, after the 200, and is classified at once. The user's meter
// takes 10 ms over the 200 and, in the panic run, then panics: the race
// stops at 40 ms. The 503 came after the success: docs/hedging.md "the
// first success heard wins over any answer that came after it" (the
// race_heard tests' header), docs/budget.md "the answers heard before it
// [the panic] are judged as they came". So the 503 is superseded as
// without the panic: it records superseded, and the throttle and the
// budget do not count it as a failure.
func TestAnAnswerHeardAfterASuccessStaysSupersededWhenThatSuccessPanics(t *testing.T) {
	type counted struct {
		gateCounts
		decision string
	}
	got := map[bool]counted{}
	for _, panics := range []bool{false, true} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		synctest.Test(t, func(t *testing.T) {
			th, b := &Throttle{Window: time.Hour}, &Budget{}
			base := sidedBase(http.StatusOK, 30*time.Millisecond, http.StatusServiceUnavailable, 12*time.Millisecond)
			tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(3), WithTracerProvider(tp),
				WithMeterProvider(panickingMeterProvider{statuses: []int64{200}, panics: panics}),
				WithHedging(Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
			if p := roundTripPanic(tr, "http://api.test/x"); (p != nil) != panics {
				t.Fatalf("panicked with %v; want a panic %v", p, panics)
			}
			synctest.Wait()
			c := counted{gateCounts: gateCountsOf(th, b)}
			c.decision = decisionOf(spans, 2)
			got[panics] = c
		})
	}
	t.Logf("without the panic %+v; with it %+v", got[false], got[true])
	if d := got[true].decision; d != string(attrs.DecisionSuperseded)+"/"+string(attrs.ReasonOtherAttempt) {
		t.Errorf("the hedge's 503, heard after attempt 1's 200, records %s once the 200's meter panicked; want superseded/other_attempt", d)
	}
	// The 200 is missing from the counts with its panic (it came before
	// the answer was judged, in the telemetry: not a Classifier's or a
	// Backoff's), and the 503 is counted neither way in both runs.
	if got[true].requests != got[false].requests-1 || got[true].accepts != got[false].accepts-1 {
		t.Errorf("with the 200's meter panic: %+v; without: %+v; want the 503 counted neither way (only the 200, whose hook panicked, missing)", got[true], got[false])
	}
}

// TestAMeterPanicOnASuccessLeavesAnEarlierFailureAsItsRetry: attempt 1's
// 503 is heard at 1.5 s (its Classifier takes 0.5 s); its hedge (sent at
// 1 s) answers 200 at 1.6 s, and the user's meter panics over the 200
// (before its Classifier). docs/budget.md: "a failure heard while it (or
// the attempt it hedged) is still in flight costs nothing, that attempt
// being its retry, paid for". The 503 was heard while the hedge was in
// flight: it must cost nothing, and be judged as it came (retry/in_flight),
// as in the run without the panic; only the 200 (whose telemetry panicked)
// may be missing from the counts.
func TestAMeterPanicOnASuccessLeavesAnEarlierFailureAsItsRetry(t *testing.T) {
	type counted struct {
		requests, accepts float64
		milli             int64
		decision          string
	}
	got := map[bool]counted{}
	for _, panics := range []bool{false, true} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		synctest.Test(t, func(t *testing.T) {
			th, b := &Throttle{Window: time.Hour}, &Budget{}
			base := sidedBase(503, 1500*time.Millisecond, 200, 600*time.Millisecond)
			classifier := func(a Answer) Classification {
				if a.Header.Get("X-Side") == "first" {
					time.Sleep(500 * time.Millisecond)
				}
				return Classification{}
			}
			tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(4), WithTracerProvider(tp),
				WithMeterProvider(panickingMeterProvider{statuses: []int64{200}, panics: panics}),
				WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithClassifier(classifier))
			if p := roundTripPanic(tr, "http://api.test/x"); (p != nil) != panics {
				t.Fatalf("panicked with %v; want a panic %v", p, panics)
			}
			synctest.Wait()
			th.mu.Lock()
			_, slot := th.clock(time.Now())
			requests, accepts := th.deps["api.test"].Value.(*throttleDep).counts(slot)
			th.mu.Unlock()
			milli := hostMilli(b)
			c := counted{requests: requests, accepts: accepts, milli: milli}
			c.decision = decisionOf(spans, 1)
			got[panics] = c
		})
	}
	t.Logf("without the panic %+v; with it %+v", got[false], got[true])
	if got[true].decision != got[false].decision {
		t.Errorf("attempt 1's 503 (heard before the 200) records %s with the 200's meter panic, %s without", got[true].decision, got[false].decision)
	}
	// Only the 200 may be missing: 1 request, 1 accept, its TokenRatio (500 milli, none at the cap).
	if got[true].requests != got[false].requests-1 || got[true].accepts != got[false].accepts-1 {
		t.Errorf("throttle: with the panic %+v, without %+v; want only the 200 missing", got[true], got[false])
	}
	if got[true].milli < got[false].milli-500 {
		t.Errorf("budget: with the 200's meter panic %d milli-tokens, without %d; the 503 heard while the hedge was in flight was charged", got[true].milli, got[false].milli)
	}
}

// TestABasePanicOnAHedgeLeavesAnEarlierFailureAsItsRetry: attempt 1's 503
// comes at 1.5 s (its Classifier takes 0.5 s) while its hedge (sent at
// 1 s) is in flight; the base panics on the hedge at 1.6 s. docs/budget.md:
// "the answers heard before it are judged as they came" and "a failure
// heard while it (or the attempt it hedged) is still in flight costs
// nothing". The 503 must record retry/in_flight, as without the panic
// (where the hedge answers 200 at 1.6 s), and cost no token beyond the
// hedge's (5000 milli left).
func TestABasePanicOnAHedgeLeavesAnEarlierFailureAsItsRetry(t *testing.T) {
	type counted struct {
		milli    int64
		decision string
	}
	got := map[bool]counted{}
	for _, panics := range []bool{false, true} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		synctest.Test(t, func(t *testing.T) {
			b := &Budget{}
			var calls atomic.Int32
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				status, after, side, hedge := 503, 1500*time.Millisecond, "first", false
				if calls.Add(1) > 1 {
					status, after, side, hedge = 200, 600*time.Millisecond, "hedge", true
				}
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(after):
				}
				if hedge && panics {
					panic("base")
				}
				return &http.Response{StatusCode: status, Header: http.Header{"X-Side": {side}}, Body: http.NoBody, Request: r}, nil
			})
			classifier := func(a Answer) Classification {
				if a.Err == nil && a.Header.Get("X-Side") == "first" {
					time.Sleep(500 * time.Millisecond)
				}
				return Classification{}
			}
			tr := NewTransport(base, WithBudget(b), WithMaxAttempts(4), WithTracerProvider(tp),
				WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithClassifier(classifier))
			if p := roundTripPanic(tr, "http://api.test/x"); (p != nil) != panics {
				t.Fatalf("panicked with %v; want a panic %v", p, panics)
			}
			synctest.Wait()
			milli := hostMilli(b)
			c := counted{milli: milli}
			c.decision = decisionOf(spans, 1)
			got[panics] = c
		})
	}
	t.Logf("without the panic %+v; with it %+v", got[false], got[true])
	if got[true].decision != got[false].decision {
		t.Errorf("attempt 1's 503 (heard before the hedge's panic) records %s with the panic, %s without", got[true].decision, got[false].decision)
	}
	if got[true].milli < 5000 {
		t.Errorf("budget: with the panic %d milli-tokens; want 5000 (6 less the hedge's token): the 503 heard while its hedge was in flight was charged", got[true].milli)
	}
}

// hostMilli is what b holds for api.test, in thousandths of a token.
func hostMilli(b *Budget) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(b.hosts["api.test"].milli)
}

// decisionOf is the decision and reason attempt n's span records.
func decisionOf(spans *tracetest.SpanRecorder, n int64) string {
	for _, s := range spans.Ended() {
		if number, d, r, _ := attemptSpanFields(s); number == n {
			return d + "/" + r
		}
	}
	return ""
}

// sidedBase answers the first call status after after (or its cut), and
// every later one (its hedges) hedgeStatus after hedgeAfter, each marked
// by its X-Side header ("first" or "hedge") for the Classifier.
func sidedBase(status int, after time.Duration, hedgeStatus int, hedgeAfter time.Duration) baseFunc {
	var calls atomic.Int32
	return func(r *http.Request) (*http.Response, error) {
		s, wait, side := status, after, "first"
		if calls.Add(1) > 1 {
			s, wait, side = hedgeStatus, hedgeAfter, "hedge"
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(wait):
		}
		return &http.Response{StatusCode: s, Header: http.Header{"X-Side": {side}}, Body: http.NoBody, Request: r}, nil
	}
}
