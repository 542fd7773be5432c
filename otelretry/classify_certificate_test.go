// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// rejectedTLSServer is a TLS server whose certificate the tests' clients
// reject (its handler must never run), and the count of connections it
// accepted: one per handshake.
func rejectedTLSServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var handshakes atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the handler ran: the handshake should have failed")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &handshakes
}

// untrustingBase is a net/http Transport for srv that trusts no
// certificate authority, so srv's certificate is rejected.
func untrustingBase(t *testing.T, srv *httptest.Server) *http.Transport {
	t.Helper()
	base := srv.Client().Transport.(*http.Transport).Clone()
	base.TLSClientConfig.RootCAs = x509.NewCertPool()
	t.Cleanup(base.CloseIdleConnections)
	return base
}

// A server certificate the client cannot verify fails again on every
// attempt: otelretry does not retry it (docs/decisions.md row 25, reason
// certificate), a write included, and the caller's error keeps the
// verification error. It took three handshakes, each charged; one now
// (charged as any transport error, docs/budget.md).
func TestACertificateTheClientCannotVerifyIsNotRetried(t *testing.T) {
	srv, handshakes := rejectedTLSServer(t)
	for _, tc := range []struct {
		name   string
		client func(*tls.Config)
	}{
		{"unknown authority", func(c *tls.Config) { c.RootCAs = x509.NewCertPool() }},
		{"another host's name", func(c *tls.Config) { c.ServerName = "other.test" }},
		{"expired", func(c *tls.Config) { c.Time = func() time.Time { return time.Now().AddDate(200, 0, 0) } }},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			t.Run(tc.name+" "+method, func(t *testing.T) {
				base := srv.Client().Transport.(*http.Transport).Clone()
				tc.client(base.TLSClientConfig)
				t.Cleanup(base.CloseIdleConnections)
				rec := tracetest.NewSpanRecorder()
				client := &http.Client{Transport: otelretry.NewTransport(base,
					otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
				var results otelretry.Results
				req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), method, srv.URL, strings.NewReader(`{"sku":1}`))
				before := handshakes.Load()
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got %d; want the certificate's failure", resp.StatusCode)
				}
				if n := handshakes.Load() - before; n != 1 {
					t.Errorf("%d handshakes; want 1: the same certificate fails again", n)
				}
				var verr *tls.CertificateVerificationError
				if !errors.As(err, &verr) {
					t.Errorf("error %v does not hold the verification error", err)
				}
				if errors.Is(err, otelretry.ErrOutcomeUnknown) || errors.Is(err, otelretry.ErrMaxAttempts) {
					t.Errorf("error %v matches ErrOutcomeUnknown or ErrMaxAttempts; nothing was sent, nothing was retried", err)
				}
				r, ok := results.Last()
				if !ok || r.Outcome != attrs.OutcomeStop || r.Attempts != 1 || r.OutcomeUnknown {
					t.Errorf("results = %+v; want stop after 1 attempt, the outcome known", r)
				}
				a := spantest.Attempts(rec.Ended())
				if len(a) != 1 {
					t.Fatalf("%d attempt spans; want 1", len(a))
				}
				if d, why, cls := attrOf(a[0], attrs.DecisionKey).AsString(), attrOf(a[0], attrs.ReasonKey).AsString(),
					attrOf(a[0], attrs.ErrorClassKey).AsString(); d != "stop" || why != string(attrs.ReasonCertificate) || cls != string(attrs.ErrorClassTLS) {
					t.Errorf("attempt: %s/%s, class %s; want stop/certificate, class tls", d, why, cls)
				}
			})
		}
	}
}

// The rule is the defaults': a Classifier's word comes first, so one that
// retries a certificate error (a certificate being rotated) is heard.
func TestAClassifierMayRetryACertificateError(t *testing.T) {
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			var verr *tls.CertificateVerificationError
			if errors.As(a.Err, &verr) {
				return otelretry.NotProcessed(otelretry.Evidence{})
			}
			return otelretry.Classification{}
		}))
	req, _ := http.NewRequest(http.MethodPost, "https://api.test/orders", strings.NewReader(`{}`))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := calls.Load(); n != 2 {
		t.Errorf("%d calls; want 2 (the classifier's NotProcessed retries it)", n)
	}
}

// A hedge whose new connection meets a certificate the client cannot
// verify ends nothing: the attempt in flight, on a connection of its own,
// goes on and answers (row 25: retry, in_flight).
func TestAHedgesCertificateErrorLeavesTheRaceToTheAttemptInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 2 {
				return nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
			}
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rec := tracetest.NewSpanRecorder()
		rt := otelretry.NewTransport(base,
			otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
			otelretry.WithHedging(otelretry.Hedging{Delay: 50 * time.Millisecond, MaxShare: 1, MaxHedges: 1}))
		var results otelretry.Results
		req, _ := http.NewRequestWithContext(otelretry.WithResults(context.Background(), &results), http.MethodGet, "https://api.test/", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("the race ended on the hedge's certificate error: %v", err)
		}
		resp.Body.Close()
		if r, _ := results.Last(); r.Outcome != attrs.OutcomeReturn || calls.Load() != 2 {
			t.Errorf("outcome %s after %d calls; want return after 2", r.Outcome, calls.Load())
		}
		for _, a := range spantest.Attempts(rec.Ended()) {
			if attrOf(a, attrs.ErrorClassKey).AsString() == string(attrs.ErrorClassTLS) {
				if d, why := attrOf(a, attrs.DecisionKey).AsString(), attrOf(a, attrs.ReasonKey).AsString(); d != "retry" || why != string(attrs.ReasonInFlight) {
					t.Errorf("the hedge: %s/%s; want retry/in_flight", d, why)
				}
			}
		}
	})
}

// An error of crypto/x509's Verify that a caller's VerifyPeerCertificate
// or VerifyConnection returns as it is (a pinning check that calls
// Verify) is a certificate the client cannot verify too: stop after 1
// handshake (row 25). These three were retried, 3 handshakes each (a
// reviewer's find).
func TestX509ErrorsACallersVerificationReturnsAreNotRetried(t *testing.T) {
	srv, handshakes := rejectedTLSServer(t)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unhandled critical extension", x509.UnhandledCriticalExtension{}},
		{"constraint violation", x509.ConstraintViolationError{}},
		{"insecure algorithm", x509.InsecureAlgorithmError(x509.SHA1WithRSA)},
	} {
		for _, via := range []string{"VerifyPeerCertificate", "VerifyConnection"} {
			t.Run(tc.name+" "+via, func(t *testing.T) {
				base := srv.Client().Transport.(*http.Transport).Clone()
				if via == "VerifyPeerCertificate" {
					base.TLSClientConfig.VerifyPeerCertificate = func([][]byte, [][]*x509.Certificate) error { return tc.err }
				} else {
					base.TLSClientConfig.VerifyConnection = func(tls.ConnectionState) error { return tc.err }
				}
				t.Cleanup(base.CloseIdleConnections)
				client := &http.Client{Transport: otelretry.NewTransport(base,
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
				var results otelretry.Results
				req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodGet, srv.URL, strings.NewReader(""))
				before := handshakes.Load()
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
					t.Fatal("no error")
				}
				r, _ := results.Last()
				if n := handshakes.Load() - before; n != 1 || r.Outcome != attrs.OutcomeStop {
					t.Errorf("%d handshakes, outcome %s after %d attempts; want 1 handshake, stop (reason certificate): err %v", n, r.Outcome, r.Attempts, err)
				}
			})
		}
	}
}

// Over another otelretry Transport, the inner operation's certificate
// stop, its one attempt sending nothing, is the outer's too: a write is
// not taken for possibly applied (check_state), as an inner error that
// made attempts otherwise is.
func TestACertificateStopBelowIsTheOutersToo(t *testing.T) {
	srv, _ := rejectedTLSServer(t)
	base := untrustingBase(t, srv)
	inner := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	outer := otelretry.NewTransport(inner, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, srv.URL, strings.NewReader(`{"sku":1}`))
	resp, err := outer.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the certificate was accepted")
	}
	if r, _ := results.Last(); r.Outcome != attrs.OutcomeStop || r.Reason != attrs.ReasonCertificate || r.OutcomeUnknown || errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("outer: %+v; want stop (certificate), the outcome known", r)
	}
}

// A certificate stop costs its host one token, as any transport error
// (docs/budget.md): it is not retried, but its host answered the
// handshake, and every request to it meets that certificate.
func TestACertificateStopCostsOneToken(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
	})
	budget := &otelretry.Budget{}
	rt := otelretry.NewTransport(base, otelretry.WithBudget(budget))
	probe, _ := http.NewRequest(http.MethodGet, "https://api.test/", nil)
	before := budget.Available(probe)
	req, _ := http.NewRequest(http.MethodGet, "https://api.test/", nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("the certificate was accepted")
	}
	if after := budget.Available(probe); after != before-1 {
		t.Errorf("Available %d before, %d after a certificate stop; want one token less", before, after)
	}
}
