// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/internal/spancheck"
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

// trustQuicGo lets quic-go's http3.Transport resend a write itself, as
// these tests of a stream's rejection need; docs/layers.md says why no
// user should (it resends after a connection's close as well:
// TestAConnectionClosedWithRequestRejectedAfterTheWrite).
var trustQuicGo = otelretry.WithTrustedBaseResends()

// A rejected POST is processed once, with both attempts in the trace and
// the first one's evidence, whether quic-go may resend it or not:
//   - without WithTrustedBaseResends, otelretry cannot tell quic-go's
//     resend from a blind one, so the prepared request has no GetBody, and
//     quic-go, which resends a rejected request only when it can make its
//     body again, returns the first rejection: the classifier proves it
//     unprocessed (refused_stream, with its code) and otelretry resends;
//   - trusted, quic-go resends the first rejection itself, and a second
//     one, which its resend does not absorb, is otelretry's to resend.
func TestRetryTransportResendsRejected(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		rejections                   int
		opts                         []otelretry.Option
		streams, rejected, processed int32
	}{
		{"without trust, rejected once", 1, nil, 2, 1, 1},
		{"trusted, rejected twice", 2, []otelretry.Option{trustQuicGo}, 3, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, pool := newCert(t)
			srv := startH3(t, cert, firstN(tc.rejections, reject))
			rt, rec := retrying(t, newClient(t, pool), tc.opts...)
			resp, err := rt.RoundTrip(post(t, srv.url()))
			if err != nil {
				t.Fatalf("err = %v, want the second attempt's answer", err)
			}
			if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
				t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
			}
			if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != tc.streams || r != tc.rejected || p != tc.processed {
				t.Errorf("server: %d streams, %d rejected, %d processed; want %d, %d, %d", s, r, p, tc.streams, tc.rejected, tc.processed)
			}
			spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 2)
			a := spantest.Attempts(rec.Ended())
			spancheck.AssertRefused(t, a[0], attrs.DecisionRetry, "h3", 0x10b, "H3_REQUEST_REJECTED")
			spancheck.AssertAnswered(t, a[1])
		})
	}
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
	spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 2)
	a := spantest.Attempts(rec.Ended())
	spancheck.AssertRefused(t, a[0], attrs.DecisionRetry, "h3", 0x10b, "H3_REQUEST_REJECTED")
	spancheck.AssertAnswered(t, a[1])
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
	spancheck.AssertOperation(t, rec, attrs.OutcomeReturn, 1)
	spancheck.AssertAnswered(t, spantest.Attempts(rec.Ended())[0])
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
	spancheck.AssertOperation(t, rec, attrs.OutcomeCheckState, 1)
	a := spantest.Attempts(rec.Ended())[0]
	spancheck.AssertAttr(t, a, attrs.DecisionKey, string(attrs.DecisionCheckState))
	if c, _ := spantest.Attr(a, attrs.ErrorClassKey); c.AsString() == "" || c.AsString() == string(attrs.ErrorClassRefusedStream) {
		t.Errorf("attempt %s = %q; want a class that proves nothing", attrs.ErrorClassKey, c.AsString())
	}
	spancheck.AssertNoEvidence(t, a)
}

// quic-go's http3.Transport reports getting a connection (GetConn) and
// getting it (GotConn, once the QUIC handshake is done) through httptrace,
// as net/http does, so a POST whose connection is still being dialled when
// the attempt timeout cuts it wrote nothing and is proven unsent: it is
// retried (reason not_processed), and the server processes it once. The
// dial is shared by the attempts; it is held until the first attempt was
// cut and the second has begun, so the cut always comes before GotConn
// and the second attempt has its whole timeout for the handshake and the
// POST (no sleep decides where the dial ends: under load a dial ending
// late in an attempt made the POST cut after its write, or, past the
// default budget's two retries, budget_exhausted).
func TestACutWhileQUICDialsIsNotAnUnknownWrite(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, always(process))
	base := newClient(t, pool)
	second := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(second) }) }
	t.Cleanup(release) // before the client's Close: a failed test's dial ends too
	var dials atomic.Int32
	base.Dial = func(ctx context.Context, addr string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
		if dials.Add(1) == 1 {
			<-second // a slow handshake, shared by every attempt
		}
		return quic.DialAddrEarly(ctx, addr, tlsCfg, cfg)
	}
	sends := &countingSends{rt: base, onSecond: release}
	rt, rec := retrying(t, sends, otelretry.WithAttemptTimeout(time.Second))
	resp, err := rt.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatalf("err = %v: a POST cut before its connection was not retried", err)
	}
	if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
		t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
	}
	if p := srv.processed.Load(); p != 1 {
		t.Errorf("server processed %d POSTs, want 1", p)
	}
	a := spantest.Attempts(rec.Ended())
	if len(a) != 2 || sends.n.Load() != 2 {
		t.Fatalf("%d attempts, %d sends; want 2: the first cut while its connection was dialled", len(a), sends.n.Load())
	}
	spancheck.AssertAttr(t, a[0], attrs.DecisionKey, string(attrs.DecisionRetry))
	spancheck.AssertAttr(t, a[0], attrs.ReasonKey, string(attrs.ReasonNotProcessed))
	spancheck.AssertAnswered(t, a[1])
}

// countingSends passes each request to rt and calls onSecond when the
// second one starts.
type countingSends struct {
	rt       http.RoundTripper
	n        atomic.Int32
	onSecond func()
}

func (c *countingSends) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.n.Add(1) == 2 {
		c.onSecond()
	}
	return c.rt.RoundTrip(r)
}
