// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// lateWritesAfterHeaders is a base that reports, as an HTTP/2 client or
// net/http's own resend may, its writes (WroteRequest) only after the
// response headers arrived: two of them, by the time the caller has read
// the first bytes of the body, which is longer than that.
type lateWritesAfterHeaders struct{}

func (lateWritesAfterHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	trace := httptrace.ContextClientTrace(r.Context())
	trace.GetConn("api.test:80")
	trace.GotConn(httptrace.GotConnInfo{})
	trace.WroteHeaders()
	return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1,
		Body: &ee3LateBody{trace: trace, r: strings.NewReader(`{"id":1}` + "\n" + strings.Repeat(" ", 4096))}, Request: r}, nil
}

type ee3LateBody struct {
	trace    *httptrace.ClientTrace
	r        io.Reader
	reported bool
}

func (b *ee3LateBody) Read(p []byte) (int, error) {
	if !b.reported {
		b.reported = true
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return b.r.Read(p[:min(len(p), 16)])
}

func (*ee3LateBody) Close() error { return nil }

// Writes the base reports after the attempt was recorded reach the
// attempt span (wire_late, wire_resend) as they reach the slog record,
// whether the caller reads the body to its end or closes it before (a
// json.Decoder that stops after its value, a stream given up). Before,
// closing it early lost the span events: otelhttp's body wrapper (v0.72)
// ends its span first thing in its Close, before the body beneath it,
// where the late writes were recorded, is closed.
func TestLateWritesReachTheSpanWhenTheBodyIsClosedEarly(t *testing.T) {
	for _, readToEOF := range []bool{true, false} {
		name := "closed before EOF"
		if readToEOF {
			name = "read to EOF"
		}
		t.Run(name, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			var logs bytes.Buffer
			tr := otelretry.NewTransport(lateWritesAfterHeaders{}, otelretry.WithTracerProvider(tp),
				otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			if readToEOF {
				io.Copy(io.Discard, resp.Body)
			}
			resp.Body.Close()

			late, resends, _ := wireEventsOfTheAttempt(t, sr)
			logged := strings.Count(logs.String(), `"msg":"retry wire"`)
			t.Logf("wire_late span events=%d, wire_resend span events=%d, \"retry wire\" slog records=%d", late, resends, logged)
			if logged != 1 {
				t.Fatalf("%d \"retry wire\" slog records, want 1", logged)
			}
			if late != 1 || resends != 1 {
				t.Errorf("the late writes reached the slog record but not the attempt span: %d wire_late and %d wire_resend span events, want 1 and 1", late, resends)
			}
		})
	}
}

// Writes a base reports after the answer are recorded on every channel
// that carries the attempt's writes, the slog record "retry wire" among
// them, with client spans or without (the base instrumented by otelhttp).
// Before, without client spans, nothing watched the body's end, and they
// were recorded nowhere.
func TestLateWritesAreLoggedWithoutClientSpans(t *testing.T) {
	for _, mode := range []string{"client spans", "without client spans", "without client spans, no-op tracer"} {
		own := mode != "client spans"
		t.Run(mode, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			var tp trace.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			if mode == "without client spans, no-op tracer" {
				tp = tracenoop.NewTracerProvider()
			}
			var logs bytes.Buffer
			var base http.RoundTripper = lateWritesAfterHeaders{}
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))}
			if own {
				base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			tr := otelretry.NewTransport(base, opts...)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			attempts := strings.Count(logs.String(), `"msg":"retry attempt"`)
			wire := strings.Count(logs.String(), `"msg":"retry wire"`)
			if attempts != 1 || wire != 1 {
				t.Errorf("%d \"retry attempt\" and %d \"retry wire\" slog records, want 1 and 1 (the two writes net/http reported after the answer are lost)\n%s", attempts, wire, logs.String())
			}
		})
	}
}

// wireEventsOfTheAttempt counts the wire_late and wire_resend events of
// the one attempt span sr ended, with the writes each wire_late names.
func wireEventsOfTheAttempt(t *testing.T, sr *tracetest.SpanRecorder) (late, resends int, lateWrites []int64) {
	t.Helper()
	att := spantest.Attempts(sr.Ended())
	if len(att) != 1 {
		t.Fatalf("%d attempt spans, want 1", len(att))
	}
	for _, e := range att[0].Events() {
		switch e.Name {
		case attrs.EventWireLate:
			late++
			for _, kv := range e.Attributes {
				if kv.Key == attrs.WireWritesKey {
					lateWrites = append(lateWrites, kv.Value.AsInt64())
				}
			}
		case attrs.EventWireResend:
			resends++
		}
	}
	return late, resends, lateWrites
}
