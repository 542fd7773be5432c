// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"testing"
)

// The attempt's context answers httptrace's own key, so that its
// ClientTrace is made only when a layer below asks for it, once: this Go
// release's httptrace finds a trace by that one key. Should a release
// change that, attempts fall back to WithClientTrace, and this test says
// so.
func TestAttemptContextMakesItsClientTraceWhenAsked(t *testing.T) {
	if !answersClientTrace {
		t.Fatal("httptrace's key was not found: every attempt pays for its ClientTrace through WithClientTrace")
	}
	a := &attempt{}
	a.ctx = attemptContext{Context: context.Background(), a: a}
	if a.wire.trace.Load() != nil {
		t.Fatal("a trace before anyone asked")
	}
	got := httptrace.ContextClientTrace(&a.ctx)
	if got == nil || got != a.wire.trace.Load() || got.GetConn == nil || got.GotConn == nil || got.WroteHeaders == nil || got.WroteRequest == nil {
		t.Fatalf("ContextClientTrace = %+v, want the wire's trace with its four hooks", got)
	}
	if again := httptrace.ContextClientTrace(&a.ctx); again != got {
		t.Error("a second ask made another trace")
	}
}

// tlsConnOf is a connection that negotiated protocol over TLS, as
// httptrace's GotConn reports one.
type tlsConnOf struct {
	net.Conn
	protocol string
}

func (c tlsConnOf) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{NegotiatedProtocol: c.protocol}
}

// The protocol memo holds at most maxProtocolHosts hosts, and counts the
// hosts it holds, never the attempts to a host it has no place for: that
// count grew by one per attempt, and would wrap after 2^31 of them, when
// the memo would take every host again.
func TestTheProtocolMemoCountsHostsNotAttempts(t *testing.T) {
	var m protocolMemo
	h1 := tlsConnOf{protocol: "http/1.1"}
	for i := range maxProtocolHosts {
		m.learn(&url.URL{Scheme: "https", Host: "tenant-" + strconv.Itoa(i) + ".test"}, h1)
	}
	beyond := &url.URL{Scheme: "https", Host: "beyond.test"}
	for range 1000 {
		m.learn(beyond, h1)
	}
	held := 0
	m.hosts.Range(func(any, any) bool { held++; return true })
	if n := m.n.Load(); n != maxProtocolHosts || held != maxProtocolHosts {
		t.Errorf("after 1000 attempts to a host beyond the memo's %d: count %d, %d held; want %d and %d", maxProtocolHosts, n, held, maxProtocolHosts, maxProtocolHosts)
	}
	if known, _ := m.knows(beyond); known {
		t.Error("a host beyond the bound was kept")
	}
}
