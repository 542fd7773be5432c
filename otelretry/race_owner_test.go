// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// stuck guards the tests below against the hang they look for: a hook
// that waits for another attempt of its race gives up after it. It is
// real time (a goroutine waiting on a mutex is not durably blocked, so
// testing/synctest could not advance its clock), and a test passes only
// when no hook had to give up.
const stuck = 3 * time.Second

// choreography forces a race's order on a base: attempt 1 waits until its
// hedge was sent, then fails (503); the hedge waits until attempt 1's
// hooks are running (release), then answers 200 and wins. The attempts
// are told apart by the attempt header (choreographed), never by the
// order they reach the base in, which a busy machine may swap; each wait
// gives up after stuck, and gaveUp says so.
type choreography struct {
	hedgeSent, release chan struct{}
	sentOnce, once     sync.Once
	gaveUp             atomic.Bool
}

// choreographed is the option that numbers the attempts for choreography.
var choreographed = otelretry.WithAttemptHeader("X-Attempt")

func newChoreography() *choreography {
	return &choreography{hedgeSent: make(chan struct{}), release: make(chan struct{})}
}

func (c *choreography) RoundTrip(r *http.Request) (*http.Response, error) {
	status := 503
	if r.Header.Get("X-Attempt") == "1" {
		c.wait(c.hedgeSent)
	} else {
		c.sentOnce.Do(func() { close(c.hedgeSent) })
		c.wait(c.release)
		status = 200
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

func (c *choreography) wait(ch <-chan struct{}) {
	if !waitFor(ch) {
		c.gaveUp.Store(true)
	}
}

// releaseOnce lets the hedge answer.
func (c *choreography) releaseOnce() { c.once.Do(func() { close(c.release) }) }

// waitFor waits for ch to close; it reports false when it gave up.
func waitFor(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(stuck):
		return false
	}
}

// A race's attempts conclude on their own goroutines, and no user code
// runs under a lock of otelretry's: attempt 1 fails while its hedge is in
// flight, and its Classifier waits until the hedge's Classifier ran. The
// hedge answers and is classified while attempt 1's Classifier waits; it
// is judged once attempt 1 was (the first answer is judged first), and
// wins.
func TestAClassifierWaitingForAnotherAttemptOfItsRaceHoldsNothing(t *testing.T) {
	base := newChoreography()
	hedgeClassified := make(chan struct{})
	var gaveUp atomic.Bool
	tr := otelretry.NewTransport(base, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}),
		choreographed,
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			switch a.Attempt {
			case 1:
				base.releaseOnce()
				gaveUp.Store(!waitFor(hedgeClassified))
			case 2:
				close(hedgeClassified)
			}
			return otelretry.Classification{}
		}))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || gaveUp.Load() || base.gaveUp.Load() {
		t.Errorf("status %d; attempt 1's Classifier gave up waiting for the hedge's: %v; the base gave up waiting: %v", resp.StatusCode, gaveUp.Load(), base.gaveUp.Load())
	}
}

// endsAfter is a span processor whose OnEnd of attempt 1's span lets the
// hedge answer, then waits until the hedge's span (attempt 2's) ended.
type endsAfter struct {
	sdktrace.SpanProcessor
	base   *choreography
	once   sync.Once
	second chan struct{}
	gaveUp atomic.Bool
}

func (p *endsAfter) OnEnd(s sdktrace.ReadOnlySpan) {
	for _, kv := range s.Attributes() {
		if kv.Key != attrs.AttemptKey {
			continue
		}
		switch kv.Value.AsInt64() {
		case 1:
			p.base.releaseOnce()
			p.gaveUp.Store(!waitFor(p.second))
		case 2:
			p.once.Do(func() { close(p.second) })
		}
	}
	p.SpanProcessor.OnEnd(s)
}

// The same for the telemetry: with the transport's own attempt spans
// (WithoutClientSpans), the span processor's OnEnd of attempt 1 waits
// until attempt 2's span ended, which it does while attempt 1's waits.
func TestASpanProcessorWaitingForAnotherAttemptOfItsRaceHoldsNothing(t *testing.T) {
	base := newChoreography()
	proc := &endsAfter{SpanProcessor: tracetest.NewSpanRecorder(), base: base, second: make(chan struct{})}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans(),
		choreographed, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || proc.gaveUp.Load() || base.gaveUp.Load() {
		t.Errorf("status %d; attempt 1's span processor gave up waiting for the hedge's span: %v; the base gave up waiting: %v", resp.StatusCode, proc.gaveUp.Load(), base.gaveUp.Load())
	}
}

// allocatedBy returns the bytes f allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// An operation's memory depends on the attempts it sends, never on the
// limits it was given: one read answered at once allocates about as much
// with an attempt limit and hedges of a million as with three.
func TestAnOperationsMemoryDependsOnTheAttemptsItSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		allocated := func(limit int) uint64 {
			h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithMaxAttempts(limit),
				otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxHedges: limit, MaxShare: 1}))
			roundTrip(t, h, get(t, t.Context(), "http://api.test/warm-up"))
			return allocatedBy(func() {
				if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items")); err != nil {
					t.Fatal(err)
				}
			})
		}
		small, huge := allocated(3), allocated(1<<20)
		if huge > small+64<<10 {
			t.Errorf("one read answered at once allocated %d KiB with limits of 2^20, %d KiB with limits of 3", huge>>10, small>>10)
		}
	})
}
