// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// refused is the evidence of a stream the server refused unprocessed.
var refused = otelretry.Evidence{Protocol: "h2", Code: 0x7, Name: "REFUSED_STREAM"}

// These tests classify errors that Go's HTTP/2 clients really returned
// from a frame-level server on 127.0.0.1, and count what the server
// processed.

// roundTripper is what each client under test offers.
type roundTripper interface {
	RoundTrip(*http.Request) (*http.Response, error)
}

// Both Transports resend a refused stream by themselves when GetBody can
// replay the body: the caller gets the answer to the resend, and
// httptrace reports two writes, the signal the retry transport counts.
func TestTransportsResendRefusedStream(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			writes := make(chan struct{}, 8)
			req := post(t, srv.url())
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { writes <- struct{}{} },
			}))
			resp, err := tr(t).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
				t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
			}
			if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 2 || r != 1 || p != 1 {
				t.Errorf("server: %d streams, %d rejected, %d processed; want 2, 1, 1", s, r, p)
			}
			// The resend's WroteRequest may come after RoundTrip returns
			// (about 1 run in 20 here), so wait for it.
			for i := range 2 {
				select {
				case <-writes:
				case <-req.Context().Done():
					t.Fatalf("httptrace reported %d writes; want 2", i)
				}
			}
			if extra := len(writes); extra != 0 {
				t.Errorf("httptrace reported %d writes; want 2", 2+extra)
			}
		})
	}
}

// Without GetBody, neither Transport can resend the refused stream, and
// both report the refusal as text only: no evidence survives, and the
// outcome of the write stays unknown to a layer above.
func TestTransportsWithoutGetBody(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			req := post(t, srv.url())
			req.GetBody = nil
			resp, err := tr(t).RoundTrip(req)
			if err == nil {
				readAll(t, resp)
				t.Fatalf("got %d; want the refusal", resp.StatusCode)
			}
			var se http2.StreamError
			if errors.As(err, &se) {
				t.Errorf("err = %v carries a typed %v; the clients were expected to report text only", err, se)
			}
			if ev, ok := h2.Evidence(err); ok {
				t.Errorf("Evidence(%v) = %+v; want none", err, ev)
			}
			if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 0 {
				t.Errorf("server: %d streams, %d processed; want 1, 0", s, p)
			}
		})
	}
}

// A ClientConn (net/http's or x/net's) never resends: its refused stream
// is the caller's, with the code, and the connection stays usable for the
// resend.
func TestClientConnsRefusedStream(t *testing.T) {
	for name, cc := range map[string]func(*testing.T, *h2Server) roundTripper{
		"net/http": func(t *testing.T, s *h2Server) roundTripper { return stdClientConn(t, s) },
		"x/net":    func(t *testing.T, s *h2Server) roundTripper { return xnetClientConn(t, s) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, firstN(1, reject))
			conn := cc(t, srv)
			resp, err := conn.RoundTrip(post(t, srv.url()))
			if err == nil {
				readAll(t, resp)
				t.Fatalf("got %d; want the refusal", resp.StatusCode)
			}
			ev, ok := h2.Evidence(err)
			if !ok || ev != refused {
				t.Fatalf("Evidence(%v) = %+v, %v; want %+v", err, ev, ok, refused)
			}
			if got := h2.Classify(otelretry.Answer{Err: err}); got != otelretry.NotProcessed(refused) {
				t.Errorf("Classify = %+v; want NotProcessed(%+v)", got, refused)
			}
			if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 0 {
				t.Errorf("server: %d streams, %d processed; want 1, 0", s, p)
			}

			resp, err = conn.RoundTrip(post(t, srv.url()))
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if p := srv.processed.Load(); resp.StatusCode != http.StatusOK || p != 1 {
				t.Errorf("resend got %d with %d processed; want 200 with 1", resp.StatusCode, p)
			}
		})
	}
}

// A stream reset after the server read the request: the clients return
// the code typed (net/http's through errors.As), it proves nothing, and
// nobody resends.
func TestResetAfterReading(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, always(resetAfterRead))
			resp, err := tr(t).RoundTrip(post(t, srv.url()))
			if err == nil {
				readAll(t, resp)
				t.Fatalf("got %d; want the reset", resp.StatusCode)
			}
			var se http2.StreamError
			if !errors.As(err, &se) || se.Code != http2.ErrCodeInternal {
				t.Fatalf("err = %v (%T); want a typed INTERNAL_ERROR", err, err)
			}
			if got := h2.Classify(otelretry.Answer{Err: err}); got != (otelretry.Classification{}) {
				t.Errorf("Classify = %+v; want the zero Classification", got)
			}
			if s, p, r := srv.streams.Load(), srv.processed.Load(), srv.resets.Load(); s != 1 || p != 1 || r != 1 {
				t.Errorf("server: %d streams, %d processed, %d reset; want 1, 1, 1 (not resent)", s, p, r)
			}
		})
	}
}

// A GOAWAY whose last stream id excludes the request: both Transports
// resend it on a new connection by themselves. A ClientConn reports it
// with an untyped error, so the classifier cannot claim it.
func TestGoAwayAboveLastStreamID(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) roundTripper{
		"net/http": func(t *testing.T) roundTripper { return bundledTransport(t) },
		"x/net":    func(t *testing.T) roundTripper { return xnetTransport(t) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, firstN(1, goAway))
			resp, err := tr(t).RoundTrip(post(t, srv.url()))
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if g, p := srv.goaways.Load(), srv.processed.Load(); resp.StatusCode != http.StatusOK || g != 1 || p != 1 {
				t.Errorf("got %d; server: %d GOAWAYs, %d processed; want 200; 1, 1", resp.StatusCode, g, p)
			}
		})
	}
	t.Run("x/net ClientConn", func(t *testing.T) {
		srv := startH2(t, firstN(1, goAway))
		resp, err := xnetClientConn(t, srv).RoundTrip(post(t, srv.url()))
		if err == nil {
			readAll(t, resp)
			t.Fatalf("got %d; want the GOAWAY", resp.StatusCode)
		}
		if ev, ok := h2.Evidence(err); ok {
			t.Errorf("Evidence(%v) = %+v; x/net was expected to give no typed evidence", err, ev)
		}
		if p := srv.processed.Load(); p != 0 {
			t.Errorf("server processed %d POSTs; want 0", p)
		}
	})
}

// The classifier reads the code by type through wrapping, and ignores
// answers with a response.
func TestEvidenceByCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}, true},
		{"wrapped", fmt.Errorf("round trip: %w", http2.StreamError{StreamID: 3, Code: http2.ErrCodeRefusedStream}), true},
		{"internal error", http2.StreamError{StreamID: 1, Code: http2.ErrCodeInternal}, false},
		{"cancel", http2.StreamError{StreamID: 1, Code: http2.ErrCodeCancel}, false},
		{"protocol error", http2.StreamError{StreamID: 1, Code: http2.ErrCodeProtocol}, false},
		{"GOAWAY closing the connection", http2.GoAwayError{LastStreamID: 1, ErrCode: http2.ErrCodeNo}, false},
		{"text only", errors.New("stream error: stream ID 1; REFUSED_STREAM"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := h2.Evidence(tc.err)
			if ok != tc.want || (ok && ev != refused) {
				t.Errorf("Evidence = %+v, %v; want %v", ev, ok, tc.want)
			}
			want := otelretry.Classification{}
			if tc.want {
				want = otelretry.NotProcessed(refused)
			}
			if got := h2.Classify(otelretry.Answer{Err: tc.err}); got != want {
				t.Errorf("Classify = %+v; want %+v", got, want)
			}
		})
	}
	if got := h2.Classify(otelretry.Answer{StatusCode: http.StatusOK}); got != (otelretry.Classification{}) {
		t.Errorf("Classify(200) = %+v; want the zero Classification", got)
	}
}

// TestARefusalBelowIsNoProofForTheOuter: an otelretry
// Transport over another (docs/layers.md "An otelretry Transport over
// another"), both with h2.Classify, over an HTTP/2 ClientConn. The inner
// (POST declared idempotent, 2 attempts) sends the POST, which the server
// processes and then resets; its retry is refused (REFUSED_STREAM), and
// it gives up. The outer's one attempt is the inner's whole operation:
// the refused last stream proves nothing of the first, which was
// processed. docs/layers.md: "An error of the inner's that made attempts
// is never the outer's proof that a write was not sent: the outer does
// not resend the write on it". The server must process the POST once.
func TestARefusalBelowIsNoProofForTheOuter(t *testing.T) {
	script := func(n int) action {
		switch n {
		case 1:
			return resetAfterRead
		case 2:
			return reject
		}
		return process
	}
	for name, cc := range map[string]func(*testing.T, *h2Server) http.RoundTripper{
		"net/http": func(t *testing.T, s *h2Server) http.RoundTripper { return stdClientConn(t, s) },
		"x/net":    func(t *testing.T, s *h2Server) http.RoundTripper { return xnetClientConn(t, s) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, script)
			inner := otelretry.NewTransport(cc(t, srv),
				otelretry.WithClassifier(h2.Classify),
				otelretry.WithIdempotentMethods(http.MethodPost),
				otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
			outer := otelretry.NewTransport(inner,
				otelretry.WithClassifier(h2.Classify),
				otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
			resp, err := outer.RoundTrip(post(t, srv.url()))
			if err == nil {
				readAll(t, resp)
			}
			if p := srv.processed.Load(); p != 1 {
				t.Errorf("server processed the POST %d times (streams %d, rejected %d, resets %d); want 1: the outer resent a write the inner had sent",
					p, srv.streams.Load(), srv.rejected.Load(), srv.resets.Load())
			}
			if err == nil || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v; want ErrOutcomeUnknown (the outer's write may have been applied)", err)
			}
		})
	}
}
