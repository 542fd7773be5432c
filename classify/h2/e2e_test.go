// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

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
	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// These tests send POSTs through otelretry's Transport over Go's HTTP/2
// clients to the frame-level server on 127.0.0.1, and check what the
// server processed against what the spans say.

// retrying wraps base in otelretry's Transport with classifier (nil:
// none) and a span recorder.
func retrying(t *testing.T, base http.RoundTripper, classifier otelretry.Classifier) (*otelretry.Transport, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	return otelretry.NewTransport(base,
		otelretry.WithTracerProvider(tp),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithClassifier(classifier), // nil is ignored
		otelretry.WithMaxAttempts(3),
		otelretry.WithDeadline(testTimeout),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
	), rec
}

// Both Transports resend a refused stream themselves inside the one
// attempt, through GetBody, but they also resend on PROTOCOL_ERROR, which
// proves nothing, and otelretry cannot see which. So for a write the
// policy does not treat as repeatable, the resend is refused once the
// request reached the wire: the POST ends check_state, processed by
// nobody (safe; the evidence is lost, see TestRetryClientConnsRefusedStream
// for a base that keeps it). A POST the caller declared repeatable is
// resent by the Transport itself, with no second retry on top, and the
// attempt span counts the two writes on the wire.
func TestRetryTransportsRefusedStream(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name+"/write", func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			rt, rec := retrying(t, tr(t), h2.Classify)
			_, err := rt.RoundTrip(post(t, srv.url()))
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
			}
			if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 1 || r != 1 || p != 0 {
				t.Errorf("server: %d streams, %d rejected, %d processed; want 1, 1, 0", s, r, p)
			}
			assertOperation(t, rec, attrs.OutcomeCheckState, 1)
		})
		t.Run(name+"/repeatable", func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			rt, rec := retrying(t, tr(t), h2.Classify)
			req := post(t, srv.url())
			req = req.WithContext(otelretry.WithIntent(req.Context(), otelretry.Intent{Repeatable: true}))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
				t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
			}
			if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 2 || r != 1 || p != 1 {
				t.Errorf("server: %d streams, %d rejected, %d processed; want 2, 1, 1", s, r, p)
			}
			assertOperation(t, rec, attrs.OutcomeReturn, 1)
			a := spantest.Attempts(rec.Ended())[0]
			assertAnswered(t, a)
			if w, _ := spantest.Attr(a, attrs.WireWritesKey); w.AsInt64() != 2 {
				t.Errorf("attempt %s = %d; want 2", attrs.WireWritesKey, w.AsInt64())
			}
			resends := 0
			for _, e := range a.Events() {
				if e.Name == attrs.EventWireResend {
					resends++
				}
			}
			if resends != 1 {
				t.Errorf("attempt has %d %s events; want 1", resends, attrs.EventWireResend)
			}
		})
	}
}

// A ClientConn as the base never resends: the classifier reads the
// refused stream, and otelretry resends the POST, processed once.
func TestRetryClientConnsRefusedStream(t *testing.T) {
	for name, cc := range map[string]func(*testing.T, *h2Server) roundTripper{
		"net/http": func(t *testing.T, s *h2Server) roundTripper { return stdClientConn(t, s) },
		"x/net":    func(t *testing.T, s *h2Server) roundTripper { return xnetClientConn(t, s) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			rt, rec := retrying(t, cc(t, srv), h2.Classify)
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
		})
	}
}

// Without the classifier the same refusal proves nothing to otelretry: the
// POST is not resent and its outcome stays unknown. The classifier is
// what makes the resend safe.
func TestRetryClientConnWithoutClassifier(t *testing.T) {
	srv := startH2(t, firstN(1, reject))
	rt, rec := retrying(t, xnetClientConn(t, srv), nil)
	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err == nil {
		readAll(t, resp)
		t.Fatalf("got %d; want the refusal", resp.StatusCode)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v; want it to match otelretry.ErrOutcomeUnknown", err)
	}
	if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 0 {
		t.Errorf("server: %d streams, %d processed; want 1, 0", s, p)
	}
	assertOperation(t, rec, attrs.OutcomeCheckState, 1)
	assertNoEvidence(t, spantest.Attempts(rec.Ended())[0])
}

// A POST the server read and then reset with INTERNAL_ERROR may have been
// applied: it is not resent, and the operation ends check_state.
func TestRetryResetAfterReading(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, always(resetAfterRead))
			rt, rec := retrying(t, tr(t), h2.Classify)
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
		})
	}
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
	assertAttr(t, a, attrs.EvidenceProtocolKey, "h2")
	assertAttr(t, a, attrs.EvidenceNameKey, "REFUSED_STREAM")
	if v, ok := spantest.Attr(a, attrs.EvidenceCodeKey); !ok || v.Type() != attribute.INT64 || v.AsInt64() != 0x7 {
		t.Errorf("attempt %s = %s; want the int 7", attrs.EvidenceCodeKey, v.Emit())
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
