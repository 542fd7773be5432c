// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

type stopBody struct {
	io.Reader
	once   sync.Once
	closed *atomic.Int32
}

func (b *stopBody) Close() error { b.once.Do(func() { b.closed.Add(1) }); return nil }

// runCatching runs one RoundTrip on a goroutine of its own, and reports how it
// ended: returned, panicked (value), or runtime.Goexit.
func runCatching(rt http.RoundTripper, url string) (how string, value any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		returned := false
		defer func() {
			if returned {
				how = "returned"
				return
			}
			if v := recover(); v != nil {
				how, value = "panicked", v
				return
			}
			how = "goexit"
		}()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		returned = true
	}()
	<-done
	return how, value
}

type stopScenario struct {
	name      string
	statuses  []int           // per call
	answerAt  []time.Duration // per call, since its start
	classify  []time.Duration // per call's classifier
	clPanic   []any           // per call: the Classifier's panic value; "goexit" for runtime.Goexit
	prepPanic map[int]any     // attempt number -> the PrepareAttemptFunc's panic
	prepTime  time.Duration
	maxHedges int
	wantHow   string
}

func runStopScenario(t *testing.T, sc stopScenario) (spans []sdktrace.ReadOnlySpan, made, closed int32, how string) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var mk, cl atomic.Int32
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			i := int(calls.Add(1)) - 1
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-time.After(sc.answerAt[i]):
			}
			mk.Add(1)
			return &http.Response{StatusCode: sc.statuses[i], Header: http.Header{"X-Call": {fmt.Sprint(i)}},
				Body: &stopBody{Reader: strings.NewReader("body"), closed: &cl}, Request: r}, nil
		})
		classifier := func(a Answer) Classification {
			if a.Err != nil {
				return Classification{}
			}
			var i int
			fmt.Sscan(a.Header.Get("X-Call"), &i)
			time.Sleep(sc.classify[i])
			switch p := sc.clPanic[i]; p {
			case nil:
			case "goexit":
				runtimeGoexit()
			default:
				panic(p)
			}
			return Classification{}
		}
		prep := func(req *http.Request, attempt int) error {
			if attempt > 1 {
				time.Sleep(sc.prepTime)
			}
			if p, ok := sc.prepPanic[attempt]; ok {
				if p == "goexit" {
					runtimeGoexit()
				}
				panic(p)
			}
			return nil
		}
		tr := NewTransport(base, WithTracerProvider(tp), WithMaxAttempts(sc.maxHedges+1),
			WithPrepareAttempt(prep), WithClassifier(classifier),
			WithHedging(Hedging{Delay: 100 * time.Millisecond, MaxHedges: sc.maxHedges, MaxShare: 1}))
		how, _ = runCatching(tr, "http://api.test/x")
		synctest.Wait()
	})
	return rec.Ended(), mk.Load(), cl.Load(), how
}

func attemptSpanFields(s sdktrace.ReadOnlySpan) (attempt int64, decision, reason, class string) {
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case attrs.AttemptKey:
			attempt = kv.Value.AsInt64()
		case attrs.DecisionKey:
			decision = kv.Value.AsString()
		case attrs.ReasonKey:
			reason = kv.Value.AsString()
		case attrs.ErrorClassKey:
			class = kv.Value.AsString()
		}
	}
	return
}

func TestARaceAPanicStoppedClosesEveryBody(t *testing.T) {
	ms := time.Millisecond
	for _, sc := range []stopScenario{
		// a1's 200 at 150 ms, classified for 500 ms; its hedge admitted at
		// 100 ms, prepared for 100 ms, panics at 200 ms.
		{name: "prepare panics while a1's 200 is classified",
			statuses: []int{200}, answerAt: []time.Duration{150 * ms}, classify: []time.Duration{500 * ms},
			clPanic: []any{nil}, prepPanic: map[int]any{2: "prepare"}, prepTime: 100 * ms, maxHedges: 1, wantHow: "panicked"},
		{name: "prepare goexits while a1's 200 is classified",
			statuses: []int{200}, answerAt: []time.Duration{150 * ms}, classify: []time.Duration{500 * ms},
			clPanic: []any{nil}, prepPanic: map[int]any{2: "goexit"}, prepTime: 100 * ms, maxHedges: 1, wantHow: "goexit"},
		// MaxHedges 3: a1 at 0 answers 503 at 450, a2 at 100 answers 503
		// at 400 (abs), a3 at 200 answers 503 at 420, a4 at 300 answers
		// 200 at 460; a1's classifier slow (300 ms), a3's panics.
		{name: "MaxHedges 3, several answers waiting, a3's classifier panics",
			statuses: []int{503, 503, 503, 200},
			answerAt: []time.Duration{450 * ms, 300 * ms, 220 * ms, 160 * ms},
			classify: []time.Duration{300 * ms, 0, 50 * ms, 0},
			clPanic:  []any{nil, nil, "classifier", nil}, maxHedges: 3, wantHow: "panicked"},
		{name: "MaxHedges 3, several answers waiting, a3's classifier goexits",
			statuses: []int{503, 503, 503, 200},
			answerAt: []time.Duration{450 * ms, 300 * ms, 220 * ms, 160 * ms},
			classify: []time.Duration{300 * ms, 0, 50 * ms, 0},
			clPanic:  []any{nil, nil, "goexit", nil}, maxHedges: 3, wantHow: "goexit"},
		{name: "MaxHedges 3, a 200 heard first and slow, a later 503 panics",
			statuses: []int{200, 503, 503, 503},
			answerAt: []time.Duration{350 * ms, 260 * ms, 600 * ms, 600 * ms},
			classify: []time.Duration{400 * ms, 0, 0, 0},
			clPanic:  []any{nil, "classifier", nil, nil}, maxHedges: 3, wantHow: "panicked"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			spans, made, closed, how := runStopScenario(t, sc)
			if how != sc.wantHow {
				t.Errorf("RoundTrip ended %s; want %s", how, sc.wantHow)
			}
			if closed != made {
				t.Errorf("%d response bodies made, %d closed", made, closed)
			}
			for _, s := range spans {
				n, d, r, c := attemptSpanFields(s)
				var evs []string
				for _, e := range s.Events() {
					evs = append(evs, e.Name)
				}
				t.Logf("span %q attempt %d decision %q reason %q class %q status %v events %v", s.Name(), n, d, r, c, s.Status().Code, evs)
			}
		})
	}
}

func runtimeGoexit() { runtime.Goexit() }
