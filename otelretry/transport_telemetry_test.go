// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

const (
	secretURL           = "http://alice:PWSECRETA1@api.test/v1/items?token=QSECRETB2&page=3"
	secretAuthorization = "Bearer HDRSECRETC3xyz"
	secretCookie        = "sid=COOKIESECRETD4"
	serverSecret        = "SRVSECRETE5"
)

var telemetrySecrets = []string{"PWSECRETA1", "alice", "QSECRETB2", "HDRSECRETC3", "COOKIESECRETD4", serverSecret, "SRVHDRSECRETF6"}

// secretStep is a step of d ms: s in 200–599 a response (with a secret
// header); 1200–1599 one whose body stalls; 2000–2999 an error that prints
// the request or quotes server text; any other a hang.
func secretStep(d, s uint16) scripted.Step {
	ms := time.Duration(d) * time.Millisecond
	h := http.Header{"Set-Cookie": {"sid=SRVHDRSECRETF6"}, "Retry-After": {"0"}}
	switch {
	case s >= 200 && s <= 599:
		return scripted.Step{Delay: ms, Status: int(s), Body: "body", Header: h}
	case s >= 1200 && s <= 1599:
		return scripted.Step{Delay: ms, Status: int(s - 1000), Body: "b", Stall: true, Header: h}
	case s >= 2000 && s <= 2999:
		var err error
		switch s % 6 {
		case 0:
			err = &url.Error{Op: "Get", URL: secretURL, Err: io.ErrUnexpectedEOF}
		case 1:
			err = fmt.Errorf("dial: %v: refused", http.Header{"Authorization": {secretAuthorization}, "Cookie": {secretCookie}})
		case 2:
			err = fmt.Errorf("net/http: HTTP/1.x transport connection broken: malformed MIME header line: %q", "Retry-After: 5 "+serverSecret+"\x7f")
		case 3:
			err = fmt.Errorf("http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=NO_ERROR, debug=%q", "sid="+serverSecret)
		case 4:
			err = &url.Error{Op: "Get", URL: secretURL, Err: fmt.Errorf("malformed HTTP status code %q", "5x "+serverSecret)}
		case 5:
			err = errors.New("Application error 0x100 (remote): sid=" + serverSecret)
		}
		return scripted.Step{Delay: ms, Err: err}
	}
	return scripted.Step{Hang: true}
}

// FuzzTransportTelemetry: whatever the timeline (answers, errors that
// print the request or quote server text, hangs, stalled bodies, hedges,
// retried POSTs, bodies read to their end and never closed), every span
// started is ended; no secret of the request (userinfo, query value,
// Authorization, Cookie), nor a server's quoted text or header value,
// reaches a span (at its start or end), a log record, a slog record, a
// metric or the error; metrics carry no id and no URL.
func FuzzTransportTelemetry(f *testing.F) {
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(2000), uint16(50), uint16(200), uint8(0))
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(2001), uint16(80), uint16(2002), uint16(50), uint16(2003), uint8(1))
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(2004), uint16(80), uint16(2005), uint16(50), uint16(1200), uint8(2))
	f.Add(false, uint16(400), uint16(40), uint16(200), uint16(200), uint16(20), uint16(200), uint16(5), uint16(200), uint8(7))
	f.Add(true, uint16(300), uint16(10), uint16(100), uint16(503), uint16(10), uint16(9999), uint16(5), uint16(200), uint8(5))
	f.Fuzz(func(t *testing.T, isGet bool, deadlineMs, backoffMs, d1, s1, d2, s2, d3, s3 uint16, mode uint8) {
		deadline := time.Duration(max(deadlineMs%2000, 1)) * time.Millisecond
		synctest.Test(t, func(t *testing.T) {
			base := scripted.New(secretStep(d1, s1), secretStep(d2, s2), secretStep(d3, s3))
			rec := tracetest.NewSpanRecorder()
			atStart := &startAttributes{}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSpanProcessor(atStart))
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			lrec := &logRecorder{}
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(lrec))
			var slogs bytes.Buffer
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(mp),
				otelretry.WithLoggerProvider(lp), otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
				otelretry.WithDeadline(deadline), otelretry.WithAttemptTimeout(time.Duration(d1%300+1) * time.Millisecond),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Duration(backoffMs%500) * time.Millisecond))}
			if mode&1 != 0 {
				opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: time.Duration(d2%60+1) * time.Millisecond, MaxHedges: 2, MaxShare: 1}))
			}
			if mode&2 != 0 {
				opts = append(opts, otelretry.WithIdempotentMethods(http.MethodPost))
			}
			tr := otelretry.NewTransport(base, opts...)
			method := http.MethodGet
			var body io.Reader
			if !isGet {
				method = http.MethodPost
				body = strings.NewReader("payload")
			}
			req, err := http.NewRequestWithContext(t.Context(), method, secretURL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", secretAuthorization)
			req.Header.Set("Cookie", secretCookie)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				if mode&4 != 0 {
					// read to EOF, never closed (only when it cannot stall)
					readCtx, stop := context.WithTimeout(context.Background(), 5*time.Millisecond)
					go func() { <-readCtx.Done(); resp.Body.Close() }()
					io.Copy(io.Discard, resp.Body)
					stop()
				} else {
					resp.Body.Close()
				}
			}
			synctest.Wait()
			time.Sleep(time.Minute) // let every timer of the operation fire
			synctest.Wait()
			var dump strings.Builder
			for _, s := range rec.Ended() {
				fmt.Fprintf(&dump, "%s %v %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events(), s.Links())
			}
			fmt.Fprintf(&dump, "%v\n", atStart.seen())
			if err != nil {
				dump.WriteString(err.Error())
			}
			for _, r := range lrec.records {
				fmt.Fprintf(&dump, "%s %v %v\n", r.EventName(), r.Body().Emit(), recordAttrs(r))
			}
			dump.WriteString(slogs.String())
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var mdump strings.Builder
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					fmt.Fprintf(&mdump, "%s %+v\n", m.Name, m.Data)
				}
			}
			dump.WriteString(mdump.String())
			for _, s := range telemetrySecrets {
				if strings.Contains(dump.String(), s) {
					i := strings.Index(dump.String(), s)
					t.Fatalf("telemetry holds %q: ...%s...", s, dump.String()[max(0, i-300):min(len(dump.String()), i+100)])
				}
			}
			for _, k := range []string{"retry.operation.id", "retry.request.id", "url.full", "url.path"} {
				if strings.Contains(mdump.String(), k) {
					t.Fatalf("a metric carries %s: %s", k, mdump.String())
				}
			}
			if started, ended := len(rec.Started()), len(rec.Ended()); started != ended {
				var open []string
				for _, s := range rec.Started() {
					if !s.EndTime().After(time.Time{}) {
						open = append(open, s.Name())
					}
				}
				t.Fatalf("%d spans started, %d ended; open: %v (err %v, resp %v)", started, ended, open, err, resp != nil)
			}
			for _, s := range spantest.Attempts(rec.Ended()) {
				readEvent(t, s)
			}
		})
	})
}

// blockedExporter is a span exporter whose Collector does not answer: each
// export waits for its timeout.
type blockedExporter struct{ timeout time.Duration }

func (e blockedExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	time.Sleep(e.timeout)
	return errors.New("collector unreachable")
}

func (blockedExporter) Shutdown(context.Context) error { return nil }

// blockedExporterProvider is a tracer provider whose exporter waits out
// timeout on each export, through the synchronous processor or, batched,
// the batching one.
func blockedExporterProvider(batched bool, timeout time.Duration) *sdktrace.TracerProvider {
	exporter := blockedExporter{timeout: timeout}
	processor := sdktrace.NewSimpleSpanProcessor(exporter)
	if batched {
		processor = sdktrace.NewBatchSpanProcessor(exporter)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(processor))
}

// shutDownInTheBubble shuts tp down inside a synctest bubble: the batcher's
// export waits out its timeout there.
func shutDownInTheBubble(tp *sdktrace.TracerProvider, timeout time.Duration) {
	go tp.Shutdown(context.Background())
	synctest.Wait()
	time.Sleep(2 * timeout)
}

// docs/stack.md: with a synchronous span processor and the Collector down,
// each span's end waits for the exporter's timeout on the request's
// goroutine, and the operation returns only after it, past its deadline
// (otelretry cannot bound a span's End); the answer is still the one the
// server gave. With the batching processor, the same exporter delays
// nothing.
func TestASynchronousExporterHoldsTheRequestPastItsDeadline(t *testing.T) {
	const deadline, exportTimeout = 2 * time.Second, 10 * time.Second
	for _, batched := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			tp := blockedExporterProvider(batched, exportTimeout)
			tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 200, Body: "ok"}),
				otelretry.WithTracerProvider(tp), otelretry.WithDeadline(deadline))
			start := time.Now()
			resp, err := (&http.Client{Transport: tr}).Do(get(t, t.Context(), "http://api.test/x"))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			switch {
			case resp.StatusCode != 200:
				t.Errorf("batched %v: status %d, want the server's 200", batched, resp.StatusCode)
			case !batched && took < exportTimeout:
				t.Errorf("synchronous: the request took %v, want at least the export timeout %v (past the %v deadline)", took, exportTimeout, deadline)
			case batched && took > 0:
				t.Errorf("batched: the request took %v of virtual time, want none", took)
			}
			shutDownInTheBubble(tp, exportTimeout)
		})
	}
}

// docs/stack.md: a synchronous processor's wait counts against the
// operation's deadline, so it changes decisions too: a GET whose 503 would
// have been retried (and answered 200) ends deadline_exceeded, reason
// overrun, after its one call, where the batching processor changes
// nothing.
func TestASynchronousExporterChangesTheRetryDecision(t *testing.T) {
	const deadline, exportTimeout = 2 * time.Second, 10 * time.Second
	for _, batched := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			tp := blockedExporterProvider(batched, exportTimeout)
			base := scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200, Body: "ok"})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithDeadline(deadline),
				otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			var res otelretry.Results
			resp, err := tr.RoundTrip(get(t, otelretry.WithResults(t.Context(), &res), "http://api.test/x"))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			op, _ := res.Last()
			switch {
			case batched && (err != nil || resp.StatusCode != 200 || op.Attempts != 2):
				t.Errorf("batched: %v, %d attempts; want the 200 after 2", err, op.Attempts)
			case !batched && (op.Outcome != attrs.OutcomeDeadlineExceeded || op.Reason != attrs.ReasonOverrun || op.Attempts != 1):
				t.Errorf("synchronous: %s/%s after %d attempts (%v); want deadline_exceeded/overrun after 1", op.Outcome, op.Reason, op.Attempts, err)
			}
			shutDownInTheBubble(tp, exportTimeout)
		})
	}
}
