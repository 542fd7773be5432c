// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// flakyH2Base is a base of one's own that reports, through the request's
// ClientTrace, a TLS connection that negotiated HTTP/2, and whose first
// call fails there, transiently, with an error it wraps with %w; later
// calls go to next (net/http, over HTTP/2).
type flakyH2Base struct {
	next  *http.Transport
	addr  string
	calls atomic.Int32
}

func (b *flakyH2Base) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.calls.Add(1) == 1 {
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil {
			if tr.GetConn != nil {
				tr.GetConn(r.URL.Host)
			}
			c, err := tls.Dial("tcp", b.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
			if err != nil {
				return nil, err
			}
			defer c.Close()
			if c.ConnectionState().NegotiatedProtocol != "h2" {
				return nil, errors.New("test: no h2")
			}
			if tr.GotConn != nil {
				tr.GotConn(httptrace.GotConnInfo{Conn: c})
			}
		}
		return nil, fmt.Errorf("pool: %w", errors.New("connection lost before the request was written"))
	}
	return b.next.RoundTrip(r)
}

// A request net/http's HTTP/2 client sends — an absolute-form URL.Opaque
// whose host is the punycode of the Unicode Host — is no refusal: its
// transient failure on an HTTP/2 connection is retried like a plain GET's.
func TestAPunycodeOpaquePathIsSentOverHTTP2(t *testing.T) {
	var seen, fail atomic.Int32
	srv, inner := h2ServerCounting(t, &seen, &fail)
	mk := func() *http.Request {
		req := get(t, t.Context(), srv.URL)
		req.Host = "bücher.example"
		req.URL = &url.URL{Scheme: "https", Host: req.URL.Host, Opaque: "//xn--bcher-kva.example/x"}
		return req
	}
	// Directly over net/http's HTTP/2: it is sent and answered.
	resp, err := inner.RoundTrip(mk())
	if err != nil {
		t.Fatalf("net/http refused it: %v", err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s", resp.Proto)
	}
	base := &flakyH2Base{next: inner, addr: strings.TrimPrefix(srv.URL, "https://")}
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	resp, err = tr.RoundTrip(mk())
	if err != nil {
		var oe *otelretry.Error
		if errors.As(err, &oe) {
			t.Fatalf("err %v (%s/%s, %d attempts, %d calls); want the transient failure retried and answered", err, oe.Outcome, oe.Reason, oe.Attempts, base.calls.Load())
		}
		t.Fatalf("err %v after %d calls; want the transient failure retried and answered", err, base.calls.Load())
	}
	resp.Body.Close()
}

// The same flaky base with a plain GET is retried and answered.
func TestAFlakyHTTP2BasesPlainGETIsRetried(t *testing.T) {
	var seen, fail atomic.Int32
	srv, inner := h2ServerCounting(t, &seen, &fail)
	base := &flakyH2Base{next: inner, addr: strings.TrimPrefix(srv.URL, "https://")}
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatalf("err %v after %d calls", err, base.calls.Load())
	}
	resp.Body.Close()
}
