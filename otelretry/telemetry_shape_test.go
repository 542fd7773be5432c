// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The attempt's CLIENT span carries the HTTP client attributes otelhttp
// writes for the same request: compared against a plain otelhttp span.
func TestAttemptSpanHasOtelhttpsClientAttributes(t *testing.T) {
	for _, status := range []int{200, 404} {
		plainRec := tracetest.NewSpanRecorder()
		plain := otelhttp.NewTransport(scripted.New(scripted.Step{Status: status}),
			otelhttp.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(plainRec))))
		h := newHarness(t, []scripted.Step{{Status: status}}, otelretry.WithMaxAttempts(1))
		for _, rt := range []http.RoundTripper{plain, h.transprt} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test:8080/v1/items", nil)
			req.Header.Set("User-Agent", "shape-test")
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		want := plainRec.Ended()[0]
		got := h.attempts()[0]
		if got.SpanKind() != trace.SpanKindClient || got.Name() != "GET" {
			t.Errorf("attempt span %q %v, want CLIENT named GET", got.Name(), got.SpanKind())
		}
		for _, kv := range want.Attributes() {
			if v, ok := spantest.Attr(got, kv.Key); !ok || v != kv.Value {
				t.Errorf("status %d: %s = %v on the attempt span, otelhttp writes %v", status, kv.Key, v.Emit(), kv.Value.Emit())
			}
		}
		if want.Status() != got.Status() {
			t.Errorf("status %d: span status %v, otelhttp's %v", status, got.Status(), want.Status())
		}
	}
}

// error.type is set where the semantic conventions ask for it: on attempts
// without a 2xx or 3xx, and on operations that did not end return; never
// on a success.
func TestErrorType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}, {Status: 200}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var types []string
		for _, a := range h.attempts() {
			v, ok := spantest.Attr(a, attrs.ErrorTypeKey)
			if !ok {
				types = append(types, "-")
				continue
			}
			types = append(types, v.AsString())
		}
		if strings.Join(types, ",") != "503,timeout,-" {
			t.Errorf("attempt error.type = %v, want 503, timeout, none", types)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		resp, _ := h.client.Do(get(t, t.Context(), "http://api.test/"))
		resp.Body.Close()
		if got := attrOf(h.operation(t), attrs.ErrorTypeKey).AsString(); got != "503" {
			t.Errorf("operation error.type = %q, want 503 (max_attempts after 503s)", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}})
		resp, _ := h.client.Do(get(t, t.Context(), "http://api.test/"))
		resp.Body.Close()
		if _, ok := spantest.Attr(h.operation(t), attrs.ErrorTypeKey); ok {
			t.Errorf("a successful operation carries error.type")
		}
	})
}

// Samplers and tail-sampling policies see method, url.full (sanitized) and
// server.address on the operation span at its start.
func TestOperationAttributesAtStart(t *testing.T) {
	start := &startAttributes{}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(start), sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 200}), otelretry.WithTracerProvider(tp))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test:8443/items?token=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	atStart := start.seen()[0] // the operation span starts first
	want := map[attribute.Key]string{
		attrs.HTTPRequestMethodKey: "GET",
		attrs.URLFullKey:           "http://api.test:8443/items?token=REDACTED",
		attrs.ServerAddressKey:     "api.test",
		attrs.ServerPortKey:        "8443",
	}
	for k, v := range want {
		if got, ok := attrValue(atStart, k); !ok || got != v {
			t.Errorf("%s at start = %q (set %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := attrValue(atStart, attrs.OperationIDKey); !ok {
		t.Errorf("retry.operation.id not set at start")
	}
}

// The log record and the attempt span carry one list of fields.
func TestLogRecordAndSpanCarryOneFieldList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"0"}}}, {Status: 200}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/items?page=2"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		dec := json.NewDecoder(&buf)
		for i, span := range h.attempts() {
			var rec map[string]any
			if err := dec.Decode(&rec); err != nil {
				t.Fatal(err)
			}
			for _, kv := range span.Attributes() {
				k := string(kv.Key)
				if !strings.HasPrefix(k, "retry.") && k != "http.request.resend_count" && k != "url.full" {
					continue // otelhttp's own client attributes
				}
				v, ok := rec[k]
				if !ok {
					t.Errorf("attempt %d: the log record lacks %s", i+1, k)
					continue
				}
				if want := kv.Value.Emit(); toString(v) != want {
					t.Errorf("attempt %d: %s is %v in the log, %s on the span", i+1, k, v, want)
				}
			}
			for k := range rec {
				switch k {
				case "time", "level", "msg", "trace_id", "span_id":
					continue
				}
				if _, ok := spantest.Attr(span, attribute.Key(k)); !ok {
					t.Errorf("attempt %d: the log record has %s, the span does not", i+1, k)
				}
			}
		}
	})
}

func toString(v any) string {
	switch v := v.(type) {
	case float64:
		return strings.TrimSuffix(strings.TrimSuffix(jsonNumber(v), ".0"), ".")
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) }

// With an instrumented base (WithoutClientSpans), the attempt span is the
// transport's INTERNAL span, carrying the attempt event, and the base's
// CLIENT span nests under it.
func TestWithoutClientSpansNestsTheBasesClientSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := otelhttp.NewTransport(scripted.New(scripted.Step{Status: 200}), otelhttp.WithTracerProvider(tp))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans())
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := rec.Ended()
	attempts := spantest.Attempts(spans)
	if len(spans) != 3 || len(attempts) != 1 {
		t.Fatalf("spans = %d (attempts %d), want the operation, the attempt and the base's client span", len(spans), len(attempts))
	}
	a := attempts[0]
	if a.SpanKind() != trace.SpanKindInternal || a.Name() != "GET" {
		t.Errorf("attempt span %q %v, want INTERNAL named GET", a.Name(), a.SpanKind())
	}
	clients := spantest.Children(spans, a)
	if len(clients) != 1 || clients[0].SpanKind() != trace.SpanKindClient {
		t.Fatalf("want the base's CLIENT span under the attempt span")
	}
}

// A method outside the standard set (PURGE, or a standard name in another
// case, as method names are case-sensitive) is http.request.method=_OTHER
// with http.request.method_original on every channel, as the HTTP semantic
// conventions ask and as otelhttp's CLIENT span says for PURGE: the
// operation span, the attempt span, the retry.attempt and retry.operation
// log records, the slog record, and the metric label (which carries no
// original, to bound its series).
func TestMethodOutsideTheStandardSetIsOtherOnEveryChannel(t *testing.T) {
	const methodKey, originalKey = attribute.Key("http.request.method"), attribute.Key("http.request.method_original")
	for _, method := range []string{"PURGE", "get"} {
		for _, clientSpans := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clientSpans=%v", method, clientSpans), func(t *testing.T) {
				var buf bytes.Buffer
				opts := []otelretry.Option{otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil)))}
				if !clientSpans {
					opts = append(opts, otelretry.WithoutClientSpans())
				}
				h, logs := newLogHarness(t, []scripted.Step{{Status: 200}}, opts...)
				req, err := http.NewRequestWithContext(t.Context(), method, "http://api.test/cache", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := h.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				check := func(channel string, get func(attribute.Key) (string, bool)) {
					t.Helper()
					m, _ := get(methodKey)
					o, ok := get(originalKey)
					if m != "_OTHER" || !ok || o != method {
						t.Errorf("%s: method %q, original %q (set %v); want _OTHER and %q", channel, m, o, ok, method)
					}
				}
				fromSpan := func(s sdktrace.ReadOnlySpan) func(attribute.Key) (string, bool) {
					return func(k attribute.Key) (string, bool) { return attrValue(s.Attributes(), k) }
				}
				fromRecord := func(rec sdklog.Record) func(attribute.Key) (string, bool) {
					return func(k attribute.Key) (string, bool) {
						v, ok := recordAttrs(rec)[k]
						return v.Emit(), ok
					}
				}
				check("operation span", fromSpan(h.operation(t)))
				attempts := h.attempts()
				if len(attempts) != 1 {
					t.Fatalf("%d attempt spans, want 1", len(attempts))
				}
				check("attempt span", fromSpan(attempts[0]))
				for _, name := range []string{attrs.LogEventAttempt, attrs.LogEventOperation} {
					recs := logs.named(name)
					if len(recs) != 1 {
						t.Fatalf("%d %s records, want 1", len(recs), name)
					}
					check(name+" record", fromRecord(recs[0]))
				}
				var rec map[string]any
				if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
					t.Fatalf("slog record %q: %v", buf.String(), err)
				}
				check("slog record", func(k attribute.Key) (string, bool) {
					v, ok := rec[string(k)].(string)
					return v, ok
				})
				if got := sumBy(t, h.collect(t), "retry.attempts", methodKey); len(got) != 1 || got["_OTHER"] != 1 {
					t.Errorf("retry.attempts by method = %v, want one attempt labelled _OTHER", got)
				}
			})
		}
	}
}
