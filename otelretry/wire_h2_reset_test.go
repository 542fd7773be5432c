// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// An HTTP/2 write whose connection dies mid-upload, after its HEADERS
// reached the server (whose handler ran), has an unknown outcome: it is
// never resent (docs/decisions.md: check_state). Only a failed first
// write on a reused HTTP/1 connection proves a request unsent, and an
// HTTP/2 connection was taken for HTTP/1 in two ways: a connection
// without TLS of a base that wraps net/http's h2c transport (whose
// configuration otelretry cannot read), and a reused h2 connection of a
// host whose latest connection negotiated HTTP/1. Both resent the write,
// and the handler ran twice.

// stallingListener remembers each accepted connection by its remote
// address, so that a handler can stop reading its own connection (the
// client's writes back up) and then reset it.
type stallingListener struct {
	net.Listener
	conns sync.Map // remote address -> *stallingConn
}

type stallingConn struct {
	*net.TCPConn
	stalled atomic.Bool
	dead    chan struct{}
	once    sync.Once
}

func (c *stallingConn) Read(p []byte) (int, error) {
	if c.stalled.Load() {
		<-c.dead
		return 0, net.ErrClosed
	}
	return c.TCPConn.Read(p)
}

func (l *stallingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &stallingConn{TCPConn: c.(*net.TCPConn), dead: make(chan struct{})}
	l.conns.Store(c.RemoteAddr().String(), sc)
	return sc, nil
}

// stallThenReset stops reading remote's connection, lets the client's
// writes back up, then resets it.
func (l *stallingListener) stallThenReset(remote string) {
	v, ok := l.conns.Load(remote)
	if !ok {
		return
	}
	c := v.(*stallingConn)
	c.stalled.Store(true)
	time.Sleep(200 * time.Millisecond)
	c.TCPConn.SetLinger(0)
	c.TCPConn.Close()
	c.once.Do(func() { close(c.dead) })
}

// uploadServer is a server on a stallingListener whose first POST handler
// reads 64 KiB of the body and then resets its connection mid-upload;
// later POSTs answer 201. GETs answer at once, /hold once release closes.
type uploadServer struct {
	*httptest.Server
	posts         atomic.Int32
	held, release chan struct{}
}

func newUploadServer(t *testing.T) *uploadServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl := &stallingListener{Listener: ln}
	s := &uploadServer{held: make(chan struct{}), release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/hold":
			close(s.held)
			<-s.release
			return
		case r.Method != http.MethodPost:
			return
		}
		io.ReadFull(r.Body, make([]byte, 64<<10)) // the handler acts as the body streams in
		if s.posts.Add(1) == 1 {
			sl.stallThenReset(r.RemoteAddr)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	s.Listener.Close()
	s.Listener = sl
	s.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1, MaxReceiveBufferPerConnection: 64 << 20, MaxReceiveBufferPerStream: 64 << 20}
	t.Cleanup(s.Close)
	return s
}

// postLargeBody sends a POST with a body large enough to back up on a
// stalled connection, and wants it sent once, ending check_state.
func postLargeBody(t *testing.T, client *http.Client, s *uploadServer) {
	t.Helper()
	body := bytes.Repeat([]byte("x"), 48<<20)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/orders", io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(io.MultiReader(bytes.NewReader(body))), nil }
	resp, err := client.Do(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := s.posts.Load(); n != 1 || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("the handler ran %d times for one POST, which ended %v; want once, and its outcome unknown", n, err)
	}
}

func getOver(t *testing.T, client *http.Client, url string, wantMajor int) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != wantMajor {
		t.Fatalf("GET %s went over %s, want HTTP/%d", url, resp.Proto, wantMajor)
	}
}

// passThrough is any layer a user puts between otelretry and net/http's
// transport (logging, auth, otelhttp).
type passThrough struct{ next http.RoundTripper }

func (p passThrough) RoundTrip(r *http.Request) (*http.Response, error) { return p.next.RoundTrip(r) }

func TestAnH2cWriteCutMidUploadThroughAWrappedBaseIsNotResent(t *testing.T) {
	s := newUploadServer(t)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	h2c := h2cTransport()
	defer h2c.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(passThrough{h2c}, quietOptions(otelretry.WithDeadline(5*time.Second))...)}
	getOver(t, client, s.URL, 2) // the connection the POST reuses
	postLargeBody(t, client, s)
}

func TestAReusedH2ConnectionOfAHostLastSeenOnHTTP1IsNotTakenForHTTP1(t *testing.T) {
	s := newUploadServer(t)
	s.EnableHTTP2 = true
	var conns atomic.Int32
	s.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if conns.Add(1) == 2 { // the second connection meets a peer of the fleet that speaks HTTP/1 alone
			c := s.TLS.Clone()
			c.GetConfigForClient, c.NextProtos = nil, []string{"http/1.1"}
			return c, nil
		}
		return nil, nil
	}}
	s.StartTLS()
	base := s.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(otelretry.WithDeadline(5*time.Second))...)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := client.Get(s.URL + "/hold") // connection 1: h2, its one stream taken
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-s.held
	getOver(t, client, s.URL+"/quick", 1) // connection 2: HTTP/1.1, the host's latest
	close(s.release)
	<-done
	postLargeBody(t, client, s) // reuses connection 1
}

// ownTLSConn is a TLS connection as a custom DialTLSContext may hand it to
// net/http: not a *tls.Conn (a byte-counting wrapper, another TLS
// library's connection), and without crypto/tls's ConnectionState.
type ownTLSConn struct{ net.Conn }

// net/http's own transport configured for unencrypted HTTP/2 alone speaks
// prior-knowledge HTTP/2 over any connection without a TLS state, an
// https URL's included; such a connection was taken for HTTP/1 (only an
// http URL's was thought h2c, and the transport read as "HTTP/1 alone"),
// and a write cut mid-upload was resent.
func TestAnH2WriteOverATLSConnOfItsOwnTypeIsNotTakenForHTTP1(t *testing.T) {
	s := newUploadServer(t)
	s.EnableHTTP2 = true
	s.StartTLS()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	base := &http.Transport{Protocols: &p, DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return ownTLSConn{tc}, nil
	}}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(otelretry.WithDeadline(5*time.Second))...)}
	getOver(t, client, s.URL, 2) // the connection the POST reuses
	postLargeBody(t, client, s)
}

// Through a layer that wraps net/http's h2c transport, otelretry cannot
// read its Protocols: a write keeps its GetBody, net/http's HTTP/2 client
// asks it for a resend of a refused stream or one above a GOAWAY, the
// guard refuses it once the request left, and the write ends check_state,
// processed by nobody: the safe side docs/layers.md names, the evidence
// lost. (Taken for HTTP/1, the same layer had a written write resent.)
func TestAWrappedH2cBasesRefusedStreamEndsCheckStateProcessedByNobody(t *testing.T) {
	for name, action := range map[string]h2Action{"REFUSED_STREAM": h2Refuse, "GOAWAY": h2GoAway} {
		t.Run(name, func(t *testing.T) {
			srv := newH2Server(t, action, h2OK)
			h2c := h2cTransport()
			defer h2c.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(passThrough{h2c}, quietOptions(otelretry.WithBackoff(otelretry.ConstantBackoff(0)))...)}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url()+"/orders", strings.NewReader(`{"order":1}`))
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := srv.processed.Load(); got != 0 || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("processed %d, err %v; want none processed, the outcome unknown", got, err)
			}
		})
	}
}
