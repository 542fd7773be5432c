// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/internal/spancheck"
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
// proves nothing. Over net/http's transport, known to speak HTTP/2, a
// write the policy does not treat as repeatable goes without a GetBody:
// the client names the cause in its error, and otelretry resends the
// refused POST as a new attempt with the evidence, processed once. Over
// x/net's transport, which otelretry cannot see into, the resend is
// refused once the request reached the wire: the POST ends check_state,
// processed by nobody (safe; the evidence is lost, see
// TestRetryClientConnsRefusedStream for a base that keeps it). A POST the
// caller declared repeatable is resent by either Transport itself, with
// no second retry on top, and the attempt span counts the two writes on
// the wire.
func TestRetryTransportsRefusedStream(t *testing.T) {
	t.Run("net/http/write", func(t *testing.T) {
		srv := startH2(t, firstN(1, reject))
		rt, rec := retrying(t, bundledTransport(t), h2.Classify)
		resp, err := rt.RoundTrip(post(t, srv.url()))
		if err != nil {
			t.Fatalf("err = %v, want the refused POST resent", err)
		}
		readAll(t, resp)
		if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 2 || r != 1 || p != 1 {
			t.Errorf("server: %d streams, %d rejected, %d processed; want 2, 1, 1", s, r, p)
		}
		spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 2)
		a := spantest.Attempts(rec.Ended())
		spancheck.AssertRefused(t, a[0], attrs.DecisionRetry, "h2", 7, "REFUSED_STREAM")
		spancheck.AssertAnswered(t, a[1])
	})
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		if name == "x/net" {
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
				spancheck.AssertOperation(t, rec, attrs.OutcomeCheckState, 1)
			})
		}
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
			spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 1)
			a := spantest.Attempts(rec.Ended())[0]
			spancheck.AssertAnswered(t, a)
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
			spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 2)
			a := spantest.Attempts(rec.Ended())
			spancheck.AssertRefused(t, a[0], attrs.DecisionRetry, "h2", 7, "REFUSED_STREAM")
			spancheck.AssertAnswered(t, a[1])
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
	spancheck.AssertOperation(t, rec, attrs.OutcomeCheckState, 1)
	spancheck.AssertNoEvidence(t, spantest.Attempts(rec.Ended())[0])
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
			spancheck.AssertOperation(t, rec, attrs.OutcomeCheckState, 1)
			a := spantest.Attempts(rec.Ended())[0]
			spancheck.AssertAttr(t, a, attrs.DecisionKey, string(attrs.DecisionCheckState))
			if c, _ := spantest.Attr(a, attrs.ErrorClassKey); c.AsString() == "" || c.AsString() == string(attrs.ErrorClassRefusedStream) {
				t.Errorf("attempt %s = %q; want a class that proves nothing", attrs.ErrorClassKey, c.AsString())
			}
			spancheck.AssertNoEvidence(t, a)
		})
	}
}
