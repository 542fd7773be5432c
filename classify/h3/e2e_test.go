// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// These tests send POSTs through otelretry's Transport over quic-go's
// HTTP/3 client to a real server on 127.0.0.1, and check what the server
// processed against what the spans say.

// retrying wraps base in otelretry's Transport with the HTTP/3 classifier
// and a span recorder.
func retrying(t *testing.T, base http.RoundTripper, opts ...otelretry.Option) (*otelretry.Transport, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	return otelretry.NewTransport(base, append([]otelretry.Option{
		otelretry.WithTracerProvider(tp),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithClassifier(h3.Classify),
		otelretry.WithMaxAttempts(3),
		otelretry.WithDeadline(testTimeout),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
	}, opts...)...), rec
}

// quic-go's http3.Transport resends a request only with proof that it was
// not processed, so it is trusted with writes (WithTrustedBaseResends).
var trustQuicGo = otelretry.WithTrustedBaseResends()

// Without that word, otelretry cannot tell quic-go's resend from a blind
// one, and refuses it once the POST was written: the rejected POST ends
// check_state, processed by nobody. Safe, and the reason the option
// exists.
func TestRetryTransportResendRefusedWithoutTrust(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, reject))
	rt, rec := retrying(t, newClient(t, pool))
	_, err := rt.RoundTrip(post(t, srv.url()))
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 0 {
		t.Errorf("server: %d streams, %d processed; want 1, 0", s, p)
	}
	assertOperation(t, rec, attrs.OutcomeCheckState, 1)
}

// A rejection that quic-go's own resend does not absorb (both streams
// rejected) is classified refused_stream with its code, and otelretry
// resends the POST, which the server processes once.
func TestRetryTransportResendsRejected(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(2, reject))
	rt, rec := retrying(t, newClient(t, pool), trustQuicGo)

	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
		t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
	}
	if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 3 || r != 2 || p != 1 {
		t.Errorf("server: %d streams, %d rejected, %d processed; want 3, 2, 1", s, r, p)
	}
	assertOperation(t, rec, attrs.OutcomeReturn, 2)
	a := spantest.Attempts(rec.Ended())
	assertRefused(t, a[0], attrs.DecisionRetry)
	assertAnswered(t, a[1])
}

// With an *http3.ClientConn as the base nothing below otelretry resends:
// the first rejection is the classifier's to read.
func TestRetryClientConnResendsRejected(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, reject))
	rt, rec := retrying(t, dialClientConn(t, srv, pool))

	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if s, p := srv.streams.Load(), srv.processed.Load(); resp.StatusCode != http.StatusOK || s != 2 || p != 1 {
		t.Errorf("got %d; server: %d streams, %d processed; want 200; 2, 1", resp.StatusCode, s, p)
	}
	assertOperation(t, rec, attrs.OutcomeReturn, 2)
	a := spantest.Attempts(rec.Ended())
	assertRefused(t, a[0], attrs.DecisionRetry)
	assertAnswered(t, a[1])
}

// No double retry: a single rejection is resent by quic-go itself inside
// the one attempt, and otelretry does not send the POST again.
func TestRetryTransportSingleRejection(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, reject))
	rt, rec := retrying(t, newClient(t, pool), trustQuicGo)

	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if s, p := srv.streams.Load(), srv.processed.Load(); resp.StatusCode != http.StatusOK || s != 2 || p != 1 {
		t.Errorf("got %d; server: %d streams, %d processed; want 200; 2, 1", resp.StatusCode, s, p)
	}
	assertOperation(t, rec, attrs.OutcomeReturn, 1)
	assertAnswered(t, spantest.Attempts(rec.Ended())[0])
}

// A POST the server read and then reset with H3_INTERNAL_ERROR may have
// been applied: it is not resent, and the operation ends check_state.
func TestRetryAbortAfterReading(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, always(abortAfterRead))
	rt, rec := retrying(t, newClient(t, pool))

	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err == nil {
		readAll(t, resp)
		t.Fatalf("got %d; want the reset", resp.StatusCode)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v; want it to match otelretry.ErrOutcomeUnknown", err)
	}
	if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 1 {
		t.Errorf("server: %d streams, %d processed; want 1, 1 (not resent)", s, p)
	}
	assertOperation(t, rec, attrs.OutcomeCheckState, 1)
	a := spantest.Attempts(rec.Ended())[0]
	assertAttr(t, a, attrs.DecisionKey, string(attrs.DecisionCheckState))
	if c, _ := spantest.Attr(a, attrs.ErrorClassKey); c.AsString() == "" || c.AsString() == string(attrs.ErrorClassRefusedStream) {
		t.Errorf("attempt %s = %q; want a class that proves nothing", attrs.ErrorClassKey, c.AsString())
	}
	assertNoEvidence(t, a)
}

// assertOperation checks the one operation span's outcome and attempts,
// and that there are that many attempt spans.
func assertOperation(t *testing.T, rec *tracetest.SpanRecorder, outcome attrs.Outcome, attempts int) {
	t.Helper()
	spans := rec.Ended()
	ops := spantest.Operations(spans)
	if len(ops) != 1 {
		t.Fatalf("got %d operation spans; want 1", len(ops))
	}
	assertAttr(t, ops[0], attrs.OutcomeKey, string(outcome))
	if n, _ := spantest.Attr(ops[0], attrs.AttemptsKey); n.AsInt64() != int64(attempts) {
		t.Errorf("operation %s = %d; want %d", attrs.AttemptsKey, n.AsInt64(), attempts)
	}
	if a := spantest.Attempts(spans); len(a) != attempts {
		t.Fatalf("got %d attempt spans; want %d", len(a), attempts)
	}
}

// assertRefused checks an attempt the classifier proved unprocessed.
func assertRefused(t *testing.T, a sdktrace.ReadOnlySpan, d attrs.Decision) {
	t.Helper()
	assertAttr(t, a, attrs.ErrorClassKey, string(attrs.ErrorClassRefusedStream))
	assertAttr(t, a, attrs.DecisionKey, string(d))
	assertAttr(t, a, attrs.EvidenceProtocolKey, "h3")
	assertAttr(t, a, attrs.EvidenceNameKey, "H3_REQUEST_REJECTED")
	if v, ok := spantest.Attr(a, attrs.EvidenceCodeKey); !ok || v.Type() != attribute.INT64 || v.AsInt64() != 0x10b {
		t.Errorf("attempt %s = %s; want the int 267 (0x10b)", attrs.EvidenceCodeKey, v.Emit())
	}
	if r, _ := spantest.Attr(a, attrs.ReasonKey); r.AsString() != string(attrs.ReasonClassifier) && r.AsString() != string(attrs.ReasonNotProcessed) {
		t.Errorf("attempt %s = %q; want %s or %s", attrs.ReasonKey, r.AsString(), attrs.ReasonClassifier, attrs.ReasonNotProcessed)
	}
}

// assertAnswered checks an attempt that got the 200.
func assertAnswered(t *testing.T, a sdktrace.ReadOnlySpan) {
	t.Helper()
	assertAttr(t, a, attrs.DecisionKey, string(attrs.DecisionReturn))
	if s, _ := spantest.Attr(a, attrs.HTTPResponseStatusCodeKey); s.AsInt64() != http.StatusOK {
		t.Errorf("attempt %s = %d; want 200", attrs.HTTPResponseStatusCodeKey, s.AsInt64())
	}
	if c, ok := spantest.Attr(a, attrs.ErrorClassKey); ok {
		t.Errorf("answered attempt has %s = %q", attrs.ErrorClassKey, c.AsString())
	}
	assertNoEvidence(t, a)
}

func assertNoEvidence(t *testing.T, a sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, k := range []attribute.Key{attrs.EvidenceProtocolKey, attrs.EvidenceCodeKey, attrs.EvidenceNameKey} {
		if v, ok := spantest.Attr(a, k); ok {
			t.Errorf("attempt has %s = %s; want none", k, v.Emit())
		}
	}
}

func assertAttr(t *testing.T, s sdktrace.ReadOnlySpan, k attribute.Key, want string) {
	t.Helper()
	if v, _ := spantest.Attr(s, k); v.AsString() != want {
		t.Errorf("%s span: %s = %q; want %q", s.Name(), k, v.AsString(), want)
	}
}
