// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// failsOnAttemptEnd is a span processor whose OnEnd of the first attempt
// span it sees (otelhttp's client span, named "GET") panics, or calls
// runtime.Goexit.
type failsOnAttemptEnd struct {
	sdktrace.SpanProcessor
	goexit bool
	done   atomic.Bool
}

func (p *failsOnAttemptEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	p.SpanProcessor.OnEnd(s)
	if s.Name() == "GET" && p.done.CompareAndSwap(false, true) {
		if p.goexit {
			runtime.Goexit()
		}
		panic("span processor")
	}
}

type closeCounted struct {
	*strings.Reader
	closed *atomic.Int32
}

func (b *closeCounted) Close() error { b.closed.Add(1); return nil }

// spanEndFailsOnClose sends one GET (answered 200 at once) on a goroutine
// of its own, which closes the body handed over: the attempt's span ends
// in that Close, and the span processor panics or exits there. It returns
// how many base bodies were made and how often they were closed.
func spanEndFailsOnClose(t *testing.T, goexit bool) (made, closed int32) {
	var m, c atomic.Int32
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			m.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &closeCounted{strings.NewReader("body"), &c}, Request: r}, nil
		})
		proc := &failsOnAttemptEnd{SpanProcessor: tracetest.NewSpanRecorder(), goexit: goexit}
		tr := NewTransport(base, WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc))))
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { recover() }()
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}()
		<-done
		time.Sleep(time.Second)
		synctest.Wait()
	})
	return m.Load(), c.Load()
}

// A span processor's OnEnd that panics as the caller closes the body
// handed over: the base's body is closed all the same, as it is when
// otelretry's own telemetry panics there (responseBody.Close, and
// TestALateWritesTelemetryPanicOnCloseStillClosesTheBody).
func TestASpanProcessorPanicOnTheCallersCloseStillClosesTheBaseBody(t *testing.T) {
	if made, closed := spanEndFailsOnClose(t, false); made != 1 || closed != 1 {
		t.Errorf("%d base bodies made, %d closes; want 1 and 1 (the panic left the base's body, its connection, open)", made, closed)
	}
}

// The same for a runtime.Goexit of the span processor.
func TestASpanProcessorGoexitOnTheCallersCloseStillClosesTheBaseBody(t *testing.T) {
	if made, closed := spanEndFailsOnClose(t, true); made != 1 || closed != 1 {
		t.Errorf("%d base bodies made, %d closes; want 1 and 1 (the Goexit left the base's body, its connection, open)", made, closed)
	}
}
