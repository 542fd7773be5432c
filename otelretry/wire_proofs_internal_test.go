// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// h2Unprocessed's godoc (wire.go): REFUSED_STREAM and a GOAWAY prove the
// server did not process the stream; "a peer's PROTOCOL_ERROR ... proves
// nothing"; the resend message is read "only for an attempt sent that way
// (withoutGetBody)"; "Only an error whose whole message has net/http's
// shape counts". Each case pins one of these.
func TestH2UnprocessedReadsOnlyNetHTTPsProofs(t *testing.T) {
	const pre, suf = "http2: Transport: cannot retry err [", "] after Request.Body was written; define Request.GetBody to avoid this error"
	for _, tc := range []struct {
		name           string
		msg            string
		withoutGetBody bool
		want           bool
	}{
		{"refused", pre + "stream error: stream ID 1; REFUSED_STREAM; received from peer" + suf, true, true},
		{"graceful GOAWAY", pre + "http2: Transport received Server's graceful shutdown GOAWAY" + suf, true, true},
		{"first stream under a GOAWAY with a code", "http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM", false, true},
		{"refused, but the attempt had a GetBody", pre + "stream error: stream ID 1; REFUSED_STREAM; received from peer" + suf, false, false},
		{"protocol error", pre + "stream error: stream ID 1; PROTOCOL_ERROR; received from peer" + suf, true, false},
		{"cancel", pre + "stream error: stream ID 1; CANCEL; received from peer" + suf, true, false},
		{"local cancel", pre + "stream error: stream ID 1; CANCEL" + suf, true, false},
		{"internal error", pre + "stream error: stream ID 1; INTERNAL_ERROR" + suf, true, false},
		{"GOAWAY code of the server's text", "http2: Transport received GOAWAY from server ErrCode:enhance your calm, said the server", false, false},
		{"GOAWAY with no code", "http2: Transport received GOAWAY from server ErrCode:", false, false},
	} {
		_, ok := h2Unprocessed(errors.New(tc.msg), tc.withoutGetBody)
		if ok != tc.want {
			t.Errorf("%s: h2Unprocessed = %v, want %v", tc.name, ok, tc.want)
		}
	}
}

// unsentByTrace's godoc (wire.go): "on a reused HTTP/1 connection, its
// one write failed writing to the connection and no write completed".
// A fresh connection (net/http resends nothing there: the failure may be
// the server's answer to the request) or a second write is no proof.
func TestUnsentByTraceNeedsOneFailedWriteOnAReusedHTTP1Connection(t *testing.T) {
	failed := &net.OpError{Op: "write", Net: "tcp", Err: errors.New("broken pipe")}
	for _, tc := range []struct {
		name   string
		reused bool
		writes int32
		want   bool
	}{
		{"reused, one failed write", true, 1, true},
		{"fresh connection", false, 1, false},
		{"reused, two writes", true, 2, false},
	} {
		var w wire
		w.askedConn.Store(true)
		w.gotConn.Store(true)
		w.connHTTP1.Store(true)
		w.connReused.Store(tc.reused)
		w.connWriteFailed.Store(true)
		w.writes.Store(tc.writes)
		if got := w.unsentByTrace(failed); got != tc.want {
			t.Errorf("%s: unsentByTrace = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// closedIdle carries net/http's words in an error type of its own.
type closedIdle struct{}

func (closedIdle) Error() string { return "http: server closed idle connection" }

// serverClosedIdle's godoc (classify.go): net/http's error "is compared
// whole, at an error of errors.New's own type in err's tree ..., never
// looked for in a message". The same words in another type are not it.
func TestServerClosedIdleIsErrorsNewsTypeOnly(t *testing.T) {
	if !serverClosedIdle(fmt.Errorf("rt: %w", errors.New("http: server closed idle connection"))) {
		t.Fatal("net/http's own error not recognized")
	}
	for _, err := range []error{closedIdle{}, fmt.Errorf("rt: %w", closedIdle{})} {
		if serverClosedIdle(err) {
			t.Errorf("%T %q taken for net/http's error", err, err)
		}
	}
}

// tlsAlert's godoc (classify.go): an alert the TLS peer sent is crypto/tls's
// *net.OpError "remote error" around its unexported alert type. The same
// alert under another Op ("local error": the client's own alert, which
// crypto/tls returns from any later read or write, after the request may
// have been written) is not the peer's, and must not get the TLS class,
// which proves the request never left (ErrorClass.NotSent).
func TestOnlyARemoteErrorIsATLSAlert(t *testing.T) {
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	done := make(chan struct{})
	go func() { // a server that speaks TLS 1.2 at most: it alerts the client
		defer close(done)
		srv := tls.Server(s, &tls.Config{MaxVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return nil, errors.New("no certificate")
		}})
		srv.Handshake()
		s.Close()
	}()
	err := tls.Client(c, &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "example.com"}).Handshake()
	c.Close()
	<-done
	var remote *net.OpError
	if !errors.As(err, &remote) || remote.Op != "remote error" {
		t.Fatalf("handshake error %v (%T); want crypto/tls's remote error", err, err)
	}
	if !tlsAlert(err) {
		t.Fatalf("tlsAlert(%v) = false for the peer's alert", err)
	}
	local := &net.OpError{Op: "local error", Err: remote.Err}
	if tlsAlert(local) {
		t.Errorf("tlsAlert(%v) = true; only Op \"remote error\" is the peer's alert", local)
	}
	if got := classify(local); got == attrs.ErrorClassTLS {
		t.Errorf("classify(%v) = %s; the client's own alert is not the peer's", local, got)
	}
}
