// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A hedged read whose hedge's Classifier panics (docs/budget.md: "in a
// hedged race the panic wins nothing: the answers heard before it are
// judged as they came"): attempt 1's 200 is heard at 110 ms and classified
// slowly (50 ms), the hedge (sent at 100 ms) hears a 503 at 120 ms and its
// Classifier panics; the panic goes on to the caller, who recovers it.
// The library records what docs/telemetry.md promises: an operation span
// (retry.operation.id, method, url.full, server.address) and attempt spans,
// the panicked one ended with a `panic` event. retryinspect must report
// what happened: the operation span is in the input, the dependency is
// inventory.test, and the library's documented panic is no contract breach.
func TestALibraryRacePanicReadsAsWhatHappened(t *testing.T) {
	spans, logs := recordedRun(t, func(t *testing.T, tp *sdktrace.TracerProvider, lp *sdklog.LoggerProvider, ctx context.Context) {
		var calls atomic.Int32
		answerAt := []time.Duration{110 * time.Millisecond, 20 * time.Millisecond}
		statuses := []int{200, 503}
		base := panicBase(func(r *http.Request) (*http.Response, error) {
			i := int(calls.Add(1)) - 1
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-time.After(answerAt[i]):
			}
			return panicResp(r, statuses[i], http.Header{"X-Call": {fmt.Sprint(i)}}), nil
		})
		cl := func(a otelretry.Answer) otelretry.Classification {
			if a.Err != nil {
				return otelretry.Classification{}
			}
			switch a.Header.Get("X-Call") {
			case "0":
				time.Sleep(50 * time.Millisecond)
			case "1":
				panic("classifier boom")
			}
			return otelretry.Classification{}
		}
		rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp),
			otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(3), otelretry.WithClassifier(cl),
			otelretry.WithHedging(otelretry.Hedging{Delay: 100 * time.Millisecond, MaxShare: 1}))
		recovered := getRecovering(ctx, rt)
		if recovered == nil || calls.Load() != 2 {
			t.Fatalf("the scenario did not play: recovered %v, %d calls", recovered, calls.Load())
		}
	})
	if !strings.Contains(string(spans), `"Name":"panic"`) || !strings.Contains(string(spans), `"inventory.test"`) {
		t.Fatalf("setup: the trace holds no panic event or no server.address")
	}
	code, out, _ := runOnFile(t, spans)
	hcode, html, _ := runOnFile(t, spans, "-html", "-")
	lcode, fromLogs, _ := runOnFile(t, logs)
	if strings.Contains(out, "so none was recorded") {
		t.Errorf("the report says the operation's span was never recorded, though the attempts' parent span, with the operation's retry.operation.id, is in the input:\n%s", grepLines(out, "none was recorded"))
	}
	if strings.Contains(out, "(no server.address)") {
		t.Errorf("the dependency is named \"(no server.address)\", though the operation span records server.address inventory.test:\n%s", grepLines(out, "server.address"))
	}
	if code != exitClean || hcode != exitClean {
		t.Errorf("text exit %d, HTML exit %d on the library's own trace of a Classifier's panic (a documented end: a `panic` event, no decision); findings:\n%s",
			code, hcode, grepLines(out, "["))
	}
	if (code == exitClean) != (lcode == exitClean) {
		t.Errorf("spans exit %d, log records of the same run exit %d (docs/retryinspect.md: \"the same per-operation table and the same findings as the spans of the same run\")\nfrom logs:\n%s", code, lcode, grepLines(fromLogs, "attempt-"))
	}
	if !strings.Contains(html, "inventory.test") {
		t.Errorf("the HTML report does not name the dependency inventory.test")
	}
	jcode, js, _ := runOnFile(t, spans, "-json")
	if jcode != exitClean || !strings.Contains(js, `"panicked": true`) {
		t.Errorf("JSON exit %d: the report does not say a panic ended the operation:\n%s", jcode, js)
	}
}

// recordedRun runs calls under a handler span, with a TracerProvider and a
// LoggerProvider for its transports,
// in virtual time, returning the stdouttrace spans and the OTLP logs.
func recordedRun(t *testing.T, calls func(t *testing.T, tp *sdktrace.TracerProvider, lp *sdklog.LoggerProvider, ctx context.Context)) (spans, logs []byte) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		exp := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		calls(t, tp, lp, ctx)
		handler.End()
		tp.Shutdown(context.Background())
		lp.Shutdown(context.Background())
		spans, logs = out.Bytes(), exp.buf.Bytes()
	})
	return spans, logs
}

type panicBase func(*http.Request) (*http.Response, error)

func (f panicBase) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func panicResp(r *http.Request, status int, hdr http.Header) *http.Response {
	if hdr == nil {
		hdr = http.Header{}
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprint(status), Header: hdr, Body: io.NopCloser(strings.NewReader("b")), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

// sequentialPanicSpans: a GET gets a 503 (retry), then a 503 whose
// Classifier panics; the caller recovers. The library's own trace.
func sequentialPanicSpans(t *testing.T) []byte {
	spans, _ := recordedRun(t, func(t *testing.T, tp *sdktrace.TracerProvider, lp *sdklog.LoggerProvider, ctx context.Context) {
		var calls atomic.Int32
		base := panicBase(func(r *http.Request) (*http.Response, error) {
			i := int(calls.Add(1)) - 1
			time.Sleep(10 * time.Millisecond)
			return panicResp(r, 503, http.Header{"X-Call": {fmt.Sprint(i)}}), nil
		})
		cl := func(a otelretry.Answer) otelretry.Classification {
			if a.Header.Get("X-Call") == "1" {
				panic("boom")
			}
			return otelretry.Classification{}
		}
		rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp),
			otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(3), otelretry.WithClassifier(cl))
		recovered := getRecovering(ctx, rt)
		if recovered == nil || calls.Load() != 2 {
			t.Fatalf("the scenario did not play: recovered %v, %d calls", recovered, calls.Load())
		}
	})
	return spans
}

// docs/retryinspect.md: "its spans show both, marked `panicked`";
// CHANGELOG: "the operation and the attempt are marked `panicked` in the
// report". Only -json says so: the text and HTML reports show "outcome -"
// and an attempt with no result or decision, and the dependency headline
// counts the operation as "did not return: 1 -".
func TestAPanickedOperationIsMarkedInTextAndHTML(t *testing.T) {
	spans := sequentialPanicSpans(t)
	_, text, _ := runOnFile(t, spans)
	htmlPath := filepath.Join(t.TempDir(), "r.html")
	runOnFile(t, spans, "-html", htmlPath)
	html, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	_, js, _ := runOnFile(t, spans, "-json")
	if !strings.Contains(js, `"panicked": true`) {
		t.Fatalf("setup: the JSON report does not mark the panic")
	}
	if !strings.Contains(text, "panicked") {
		t.Errorf("the text report never says a panic ended the operation:\n%s", grepLines(text, "outcome"))
	}
	if !strings.Contains(string(html), "panicked") {
		t.Errorf("the HTML report never says a panic ended the operation")
	}
	if strings.Contains(text, "did not return: 1 -") {
		t.Errorf("the dependency headline gives the panicked operation's outcome as \"-\":\n%s", grepLines(text, "did not return"))
	}
}

// The library's own trace of a panicked operation fails -strict: the
// operation span is noted as lacking retry.attempts and retry.deadline_ms,
// closing fields the library never records on a span a panic ended, like
// retry.outcome, which the same change made optional (extract.go
// unlessPanicked: "what the library records at an operation's ... end is
// not there").
func TestAPanickedLibraryTracePassesStrict(t *testing.T) {
	spans := sequentialPanicSpans(t)
	code, out, _ := runOnFile(t, spans, "-strict")
	if code != exitClean {
		t.Errorf("-strict exit %d on the library's own trace of a Classifier's panic:\n%s", code, grepLines(out, "lacks"))
	}
}

// An application tags its own job span with the operation id it gave
// WithOperationID (README: "select on it"), and its recover middleware
// records a `panic` event on that span after the call returned. The
// library's operation below it is complete and clean. Before the panicked
// change the app span was "without retry attributes"; now it is read as a
// second operation of the same id.
func TestAnAppSpanWithAPanicEventIsNoOperation(t *testing.T) {
	inner := readTimeline() // op-read, clean, outcome return
	app := tracefixture.Span{
		Name: "job", Kind: trace.SpanKindServer, Start: ms(0), End: ms(400),
		Attrs:    []attribute.KeyValue{attrs.OperationIDKey.String("op-read")},
		Events:   []tracefixture.Event{{Name: attrs.EventPanic, At: ms(350), Attrs: []attribute.KeyValue{attribute.String("exception.type", "string")}}},
		Children: []tracefixture.Span{inner},
	}
	code, out, _ := inspectStdout(t, []tracefixture.Span{app}, false)
	if code != exitClean || !strings.HasPrefix(out, "retryinspect: 1 operation,") {
		t.Errorf("exit %d on a clean library operation under an app span carrying its operation id and a panic event of its own:\n%s", code, out)
	}
}

// Another implementation records a `panic` event on every span (hostile
// or merely different input), on operations that returned: an attempt
// whose operation records outcome return is not one "a panic ended", yet
// its missing decision, elapsed_ms, remaining_ms and method pass without
// a finding (docs/retryinspect.md: missing a field of the minimal attempt
// event is a finding).
func TestAPanicEventHidesNoMissingDecisionOfAnOperationThatReturned(t *testing.T) {
	url := endpoint("/items")
	ev := []tracefixture.Event{{Name: attrs.EventPanic, At: ms(10)}}
	at := try{opID: "op-x", n: 1, method: "GET", url: url, status: 200, start: 0, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn,
		drop: []attribute.Key{attrs.DecisionKey, attrs.ElapsedMsKey, attrs.RemainingMsKey, attrs.HTTPRequestMethodKey}, withoutHTTPSpans: true}.span()
	at.Events = ev
	root := op{id: "op-x", method: "GET", url: url, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, start: 0, end: 60,
		events: ev, children: children(at)}.span()
	code, out, _ := inspectStdout(t, []tracefixture.Span{root}, false)
	if code != exitFindings || !strings.Contains(out, "lacks") {
		t.Errorf("exit %d: an attempt of an operation that returned, lacking retry.decision, retry.elapsed_ms, retry.remaining_ms and http.request.method, gives no finding because it carries an event named panic:\n%s", code, out)
	}
}

// getRecovering sends a GET to inventory.test through rt and returns what
// it panicked with (nil when it did not), as a caller that recovers does.
func getRecovering(ctx context.Context, rt http.RoundTripper) (recovered any) {
	defer func() { recovered = recover() }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://inventory.test/items", nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	return nil
}
