// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/otelretry/otelretry-go/attrs"
)

// telemetryPanic is the value the telemetry of these tests panics with.
type telemetryPanic string

// spanWatch is a span processor that counts the spans started and ended,
// and panics in OnStart (before counting the span: the SDK never returns
// it) or in OnEnd (after counting it: the SDK has ended it) for the spans
// its predicates pick.
type spanWatch struct {
	mu             sync.Mutex
	started, ended int
	onStart, onEnd func(sdktrace.ReadOnlySpan) bool
}

func (w *spanWatch) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if w.onStart != nil && w.onStart(s) {
		panic(telemetryPanic("span processor OnStart"))
	}
	w.mu.Lock()
	w.started++
	w.mu.Unlock()
}

func (w *spanWatch) OnEnd(s sdktrace.ReadOnlySpan) {
	w.mu.Lock()
	w.ended++
	w.mu.Unlock()
	if w.onEnd != nil && w.onEnd(s) {
		panic(telemetryPanic("span processor OnEnd"))
	}
}

func (*spanWatch) Shutdown(context.Context) error   { return nil }
func (*spanWatch) ForceFlush(context.Context) error { return nil }

func (w *spanWatch) open() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started - w.ended
}

func hasAttr(s sdktrace.ReadOnlySpan, k attribute.Key) bool {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return true
		}
	}
	return false
}

// The operation span at its start carries the operation id; an attempt
// span, at its end, its number.
func isOperationSpan(s sdktrace.ReadOnlySpan) bool {
	return hasAttr(s, attrs.OperationIDKey) && !hasAttr(s, attrs.AttemptKey)
}
func isFirstAttemptSpan(s sdktrace.ReadOnlySpan) bool {
	for _, kv := range s.Attributes() {
		if kv.Key == attrs.AttemptKey {
			return kv.Value.AsInt64() == 1
		}
	}
	return false
}

// panickingExporter is a log exporter that panics on the records of one
// event, behind a synchronous (simple) processor.
type panickingExporter struct{ event string }

func (e panickingExporter) Export(_ context.Context, records []sdklog.Record) error {
	for _, r := range records {
		if r.EventName() == e.event {
			panic(telemetryPanic("log exporter on " + e.event))
		}
	}
	return nil
}
func (panickingExporter) Shutdown(context.Context) error   { return nil }
func (panickingExporter) ForceFlush(context.Context) error { return nil }

// panickingHandler is a slog handler that panics in Handle.
type panickingHandler struct{ slog.Handler }

func (panickingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (panickingHandler) Handle(context.Context, slog.Record) error {
	panic(telemetryPanic("slog handler"))
}

// panickingView is a metric view whose attribute filter panics on the
// named instrument.
func panickingView(instrument string) sdkmetric.Option {
	return sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: instrument}, sdkmetric.Stream{
		AttributeFilter: func(attribute.KeyValue) bool { panic(telemetryPanic("view on " + instrument)) },
	}))
}

// A panic in telemetry on the request's path (a span processor, a
// synchronous log exporter, a metric view's attribute filter, an exemplar
// filter, a slog handler) follows the rule for hooks: every reservation
// is released (the body buffer), every body closed (the 503 being drained
// and the 200 being handed over included: their connections go idle and
// are closed, so no net/http goroutine stays), every span ended, and the
// panic goes on. Over loopback, before the caller's context ends.
func TestTelemetryPanicReleasesEverythingAndPropagates(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		calls[r.Header.Get("X-Op")]++
		n := calls[r.Header.Get("X-Op")]
		mu.Unlock()
		switch {
		case n == 1 && r.Header.Get("X-Stall") != "":
			// A body that stops coming: the drain is cut, and the body
			// closed, when its bound passes.
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy")
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	type setup struct {
		onStart, onEnd func(sdktrace.ReadOnlySpan) bool // the spans whose processor call panics
		metrics        []sdkmetric.Option
		logs           string // the event whose records the log exporter panics on
		slog           bool
		bodyless       bool // GET: otelhttp records a bodyless request's metrics at once, in RoundTrip
		stall          bool // the first 503's body stalls
	}
	cases := map[string]setup{
		"span OnStart, operation span":   {onStart: isOperationSpan},
		"span OnStart, attempt span":     {onStart: func(s sdktrace.ReadOnlySpan) bool { return !isOperationSpan(s) }},
		"span OnEnd, first attempt span": {onEnd: isFirstAttemptSpan},
		// otelhttp ends its span when the body is closed, which the cut of
		// the drain does.
		"span OnEnd, first attempt span, drain cut": {onEnd: isFirstAttemptSpan, stall: true},
		"span OnEnd, operation span":                {onEnd: isOperationSpan},
		// The cleanup's own span ends panic again.
		"span OnEnd, every span":               {onEnd: func(sdktrace.ReadOnlySpan) bool { return true }},
		"log exporter on retry.attempt":        {logs: attrs.LogEventAttempt},
		"log exporter on retry.operation":      {logs: attrs.LogEventOperation},
		"view on retry.attempts":               {metrics: []sdkmetric.Option{panickingView("retry.attempts")}},
		"view on retry.backoff.duration":       {metrics: []sdkmetric.Option{panickingView("retry.backoff.duration")}},
		"view on retry.operations":             {metrics: []sdkmetric.Option{panickingView("retry.operations")}},
		"view on http.client.request.duration": {metrics: []sdkmetric.Option{panickingView("http.client.request.duration")}, bodyless: true},
		"exemplar filter": {metrics: []sdkmetric.Option{sdkmetric.WithExemplarFilter(func(context.Context) bool {
			panic(telemetryPanic("exemplar filter"))
		})}, bodyless: true},
		"slog handler": {slog: true},
	}
	for name, c := range cases {
		for _, clientSpans := range []bool{true, false} {
			if name == "view on http.client.request.duration" && !clientSpans {
				continue // otelhttp only records through its client spans
			}
			t.Run(fmt.Sprintf("%s/clientSpans=%v", name, clientSpans), func(t *testing.T) {
				spans := &spanWatch{onStart: c.onStart, onEnd: c.onEnd}
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
				mp := sdkmetric.NewMeterProvider(append([]sdkmetric.Option{sdkmetric.WithReader(sdkmetric.NewManualReader())}, c.metrics...)...)
				opts := []Option{WithTracerProvider(tp), WithMeterProvider(mp), WithIdempotentMethods(http.MethodPut),
					WithBackoff(ConstantBackoff(0)), WithoutBudget()}
				if c.logs != "" {
					opts = append(opts, WithLoggerProvider(sdklog.NewLoggerProvider(
						sdklog.WithProcessor(sdklog.NewSimpleProcessor(panickingExporter{c.logs})))))
				}
				if c.slog {
					opts = append(opts, WithLogger(slog.New(panickingHandler{slog.DiscardHandler})))
				}
				if !clientSpans {
					opts = append(opts, WithoutClientSpans())
				}
				before := goleak.IgnoreCurrent()
				base := &http.Transport{}
				defer base.CloseIdleConnections()
				tr := NewTransport(base, opts...)
				var req *http.Request
				if c.bodyless {
					req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
				} else {
					// A body without GetBody, of known length: buffered for the retry.
					req, _ = http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, io.NopCloser(bytes.NewReader([]byte("payload"))))
					req.ContentLength = 7
				}
				req.Header.Set("X-Op", t.Name())
				if c.stall {
					req.Header.Set("X-Stall", "1")
				}

				var recovered any
				func() {
					defer func() { recovered = recover() }()
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
				}()
				if _, ok := recovered.(telemetryPanic); !ok {
					t.Fatalf("RoundTrip's panic: %v, want the telemetry's", recovered)
				}
				if n := spans.open(); n != 0 {
					t.Errorf("%d spans left open", n)
				}
				// Every response closed: their connections are idle, and
				// closing those leaves no net/http goroutine, while the
				// caller's context still runs.
				base.CloseIdleConnections()
				if err := goleak.Find(before); err != nil {
					t.Errorf("goroutines left after the panic: %v", err)
				}
				// Read after the goroutines ended: the one that read the body
				// into the buffer lets go of it as it ends.
				if n := tr.bodies.used.Load(); n != 0 {
					t.Errorf("%d bytes of the body buffer still reserved", n)
				}
			})
		}
	}
}

// closeCounter is a response body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closes atomic.Int32
}

func (b *closeCounter) Close() error { b.closes.Add(1); return nil }

// The response a state check hands over (no attempt's) is closed too when
// the telemetry panics as the operation ends.
func TestTelemetryPanicClosesTheStoredResponse(t *testing.T) {
	base := baseFunc(func(r *http.Request) (*http.Response, error) {
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil {
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteHeaders()
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET} // the write's answer is lost
	})
	body := &closeCounter{Reader: strings.NewReader("order 1")}
	check := func(context.Context, StateCheck) (StateResult, error) {
		return StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{}, Body: body}}, nil
	}
	tr := NewTransport(base, WithStateCheck(check), WithLoggerProvider(sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(panickingExporter{attrs.LogEventOperation})))))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
	func() {
		defer func() {
			if _, ok := recover().(telemetryPanic); !ok {
				t.Error("the log exporter's panic did not reach the caller")
			}
		}()
		tr.RoundTrip(req)
	}()
	if n := body.closes.Load(); n != 1 {
		t.Errorf("the stored response's body was closed %d times, want 1", n)
	}
}
