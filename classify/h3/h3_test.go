// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// rejected is the evidence of a request the server rejected unprocessed.
var rejected = otelretry.Evidence{Protocol: "h3", Code: 0x10b, Name: "H3_REQUEST_REJECTED"}

// These tests classify errors that quic-go's HTTP/3 client really returned
// from a real server on 127.0.0.1, and count what the server processed.

// quic-go's Transport resends a rejected request once by itself, so a
// rejection reaches the caller when the resend is rejected too: both
// streams were refused unread, and the error proves it.
func TestTransportRejectedTwice(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(2, reject))
	tr := newClient(t, pool)

	resp, err := tr.RoundTrip(post(t, srv.url()))
	if err == nil {
		readAll(t, resp)
		t.Fatalf("got %d; want the rejection", resp.StatusCode)
	}
	assertRejected(t, err)
	if got := h3.Classify(otelretry.Answer{Err: err}); got != otelretry.NotProcessed(rejected) {
		t.Errorf("Classify = %+v; want NotProcessed(%+v)", got, rejected)
	}
	if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 2 || r != 2 || p != 0 {
		t.Errorf("server: %d streams, %d rejected, %d processed; want 2, 2, 0", s, r, p)
	}

	// The request was provably not processed, so sending it again is safe:
	// the server now processes it, once.
	resp, err = tr.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
		t.Errorf("resend got %d %q; want 200 created", resp.StatusCode, got)
	}
	if p := srv.processed.Load(); p != 1 {
		t.Errorf("server processed %d POSTs; want 1", p)
	}
}

// A single rejection never reaches the caller of quic-go's Transport: it
// resends the replayable request itself, which a layer above must not
// repeat.
func TestTransportResendsOneRejection(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, reject))
	tr := newClient(t, pool)

	resp, err := tr.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "created" {
		t.Errorf("got %d %q; want 200 created", resp.StatusCode, got)
	}
	if s, r, p := srv.streams.Load(), srv.rejected.Load(), srv.processed.Load(); s != 2 || r != 1 || p != 1 {
		t.Errorf("server: %d streams, %d rejected, %d processed; want 2, 1, 1", s, r, p)
	}
}

// An *http3.ClientConn never resends: its first rejection is the
// caller's, and the connection stays usable for the resend.
func TestClientConnRejected(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, reject))
	cc := dialClientConn(t, srv, pool)

	resp, err := cc.RoundTrip(post(t, srv.url()))
	if err == nil {
		readAll(t, resp)
		t.Fatalf("got %d; want the rejection", resp.StatusCode)
	}
	assertRejected(t, err)
	if s, p := srv.streams.Load(), srv.processed.Load(); s != 1 || p != 0 {
		t.Errorf("server: %d streams, %d processed; want 1, 0", s, p)
	}
	resp, err = cc.RoundTrip(post(t, srv.url()))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if p := srv.processed.Load(); resp.StatusCode != http.StatusOK || p != 1 {
		t.Errorf("resend got %d with %d processed; want 200 with 1", resp.StatusCode, p)
	}
}

// A connection closed with H3_REQUEST_REJECTED reaches the client as an
// *http3.Error around a *quic.ApplicationError: the close names no
// request and reaches every stream open on the connection, so even where
// the server read nothing (here) it proves nothing of this one.
func TestAConnectionClosedWithRequestRejectedProvesNothing(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, firstN(1, closeRejected))
	cc := dialClientConn(t, srv, pool)

	_, err := cc.RoundTrip(post(t, srv.url()))
	if _, ok := errors.AsType[*quic.ApplicationError](err); !ok {
		t.Fatalf("err = %v (%T); want a *quic.ApplicationError in its chain", err, err)
	}
	if ev, ok := h3.Evidence(err); ok {
		t.Errorf("Evidence(%v) = %+v; a connection's close is no proof", err, ev)
	}
	if p := srv.processed.Load(); p != 0 {
		t.Errorf("server processed %d POSTs; want 0", p)
	}
}

// quic-go's stream API returns the bare *quic.StreamError: a stream the
// server reset with H3_REQUEST_REJECTED before reading it.
func TestQUICStreamRejected(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, always(reject))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := quic.DialAddr(ctx, srv.addr(), &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	str, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A QUIC stream exists for the peer once data is sent on it.
	if _, err := str.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(str)
	var se *quic.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T); want a *quic.StreamError", err, err)
	}
	if _, ok := errors.AsType[*http3.Error](err); ok {
		t.Fatalf("err = %v is an *http3.Error; this test is for the bare QUIC error", err)
	}
	assertRejected(t, err)
}

// A handler that read the POST and then aborted: quic-go resets the stream
// with H3_INTERNAL_ERROR. The server processed the request, so nothing
// proves otherwise and the classifier leaves it to the default rules.
func TestAbortAfterReading(t *testing.T) {
	cert, pool := newCert(t)
	srv := startH3(t, cert, always(abortAfterRead))
	tr := newClient(t, pool)

	resp, err := tr.RoundTrip(post(t, srv.url()))
	if err == nil {
		readAll(t, resp)
		t.Fatalf("got %d; want the reset", resp.StatusCode)
	}
	e, ok := errors.AsType[*http3.Error](err)
	if !ok || e.ErrorCode != http3.ErrCodeInternalError || !e.Remote {
		t.Fatalf("err = %v (%T); want a remote H3_INTERNAL_ERROR", err, err)
	}
	if ev, ok := h3.Evidence(err); ok {
		t.Errorf("Evidence(%v) = %+v; want none", err, ev)
	}
	if got := h3.Classify(otelretry.Answer{Err: err}); got != (otelretry.Classification{}) {
		t.Errorf("Classify = %+v; want the zero Classification", got)
	}
	if s, p, a := srv.streams.Load(), srv.processed.Load(), srv.aborted.Load(); s != 1 || p != 1 || a != 1 {
		t.Errorf("server: %d streams, %d processed, %d aborted; want 1, 1, 1 (not resent)", s, p, a)
	}
}

// The classifier reads codes by type through wrapping, requires the
// server to have sent them, and ignores answers with a response.
func TestEvidenceByCode(t *testing.T) {
	const (
		rejectedCode = http3.ErrCodeRequestRejected
		cancelled    = http3.ErrCodeRequestCanceled
	)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"stream error", &quic.StreamError{ErrorCode: quic.StreamErrorCode(rejectedCode), Remote: true}, true},
		{"application error (a connection's close)", &quic.ApplicationError{ErrorCode: quic.ApplicationErrorCode(rejectedCode), Remote: true}, false},
		{"http3 error", &http3.Error{ErrorCode: rejectedCode, Remote: true}, true},
		{"wrapped", fmt.Errorf("round trip: %w", &http3.Error{ErrorCode: rejectedCode, Remote: true}), true},
		{"local rejection", &quic.StreamError{ErrorCode: quic.StreamErrorCode(rejectedCode)}, false},
		{"cancelled", &http3.Error{ErrorCode: cancelled, Remote: true}, false},
		{"internal error", &quic.ApplicationError{ErrorCode: quic.ApplicationErrorCode(http3.ErrCodeInternalError), Remote: true}, false},
		{"no error after GOAWAY", &quic.ApplicationError{ErrorCode: quic.ApplicationErrorCode(http3.ErrCodeNoError), Remote: true}, false},
		{"text only", errors.New("H3_REQUEST_REJECTED"), false},
		{"idle timeout", &quic.IdleTimeoutError{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := h3.Evidence(tc.err)
			if ok != tc.want || (ok && ev != rejected) {
				t.Errorf("Evidence = %+v, %v; want %v", ev, ok, tc.want)
			}
			want := otelretry.Classification{}
			if tc.want {
				want = otelretry.NotProcessed(rejected)
			}
			if got := h3.Classify(otelretry.Answer{Err: tc.err}); got != want {
				t.Errorf("Classify = %+v; want %+v", got, want)
			}
		})
	}
	if got := h3.Classify(otelretry.Answer{StatusCode: http.StatusOK}); got != (otelretry.Classification{}) {
		t.Errorf("Classify(200) = %+v; want the zero Classification", got)
	}
}

// assertRejected checks that err carries the server's H3_REQUEST_REJECTED
// and that the classifier says so.
func assertRejected(t *testing.T, err error) {
	t.Helper()
	ev, ok := h3.Evidence(err)
	if !ok || ev != rejected {
		t.Fatalf("Evidence(%v) = %+v, %v; want %+v", err, ev, ok, rejected)
	}
	if got := h3.Classify(otelretry.Answer{Err: err}); got != otelretry.NotProcessed(rejected) {
		t.Errorf("Classify = %+v; want NotProcessed(%+v)", got, rejected)
	}
}

// dialClientConn opens one QUIC connection to srv and returns quic-go's
// HTTP/3 client connection over it, closed when the test ends.
func dialClientConn(t *testing.T, srv *h3Server, pool *x509.CertPool) *http3.ClientConn {
	t.Helper()
	tr := newClient(t, pool)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := quic.DialAddr(ctx, srv.addr(), &tls.Config{RootCAs: pool, NextProtos: []string{http3.NextProtoH3}},
		&quic.Config{MaxIdleTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "") })
	return tr.NewClientConn(conn)
}
