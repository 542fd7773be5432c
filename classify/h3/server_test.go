// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// testTimeout bounds every request and every wait of these tests, so that a
// failure ends them instead of hanging.
const testTimeout = 10 * time.Second

// body is what every test POSTs; the server checks it arrived whole.
const body = "order=42"

// Server actions on a request stream, chosen in the order the streams
// arrive (across connections).
type action int

const (
	// process: read the whole POST body, count it as processed, answer 200.
	process action = iota
	// reject: reset the stream with H3_REQUEST_REJECTED before reading
	// anything from it (RFC 9114 §4.1.1).
	reject
	// closeRejected: close the whole connection with H3_REQUEST_REJECTED
	// before reading anything from the stream.
	closeRejected
	// abortAfterRead: read the whole POST body, count it as processed,
	// then abort the handler (quic-go resets the stream with
	// H3_INTERNAL_ERROR).
	abortAfterRead
)

// h3Server is a real HTTP/3 server (quic-go's RawServerConn behind its own
// QUIC accept loop) that can refuse request streams at the stream level
// before HTTP/3 reads them.
type h3Server struct {
	t      *testing.T
	ln     *quic.Listener
	srv    *http3.Server
	script func(n int) action // n counts request streams from 1

	streams   atomic.Int32 // request streams accepted
	rejected  atomic.Int32 // streams refused unread
	processed atomic.Int32 // POSTs whose body was read whole
	aborted   atomic.Int32 // processed POSTs whose handler aborted

	mu      sync.Mutex
	conns   []*quic.Conn
	actions map[streamKey]action // for the streams handed to the handler
	wg      sync.WaitGroup
}

// streamKey names a request stream for the handler, which sees the
// client's address and the stream's id.
type streamKey struct {
	remote string
	id     quic.StreamID
}

// startH3 starts a server on 127.0.0.1 that treats the n-th request stream
// as script(n) says. It stops when the test ends.
func startH3(t *testing.T, cert tls.Certificate, script func(n int) action) *h3Server {
	t.Helper()
	s := &h3Server{t: t, script: script, actions: make(map[streamKey]action)}
	s.srv = &http3.Server{Handler: http.HandlerFunc(s.handle)}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	ln, err := quic.ListenAddr("127.0.0.1:0", tlsConf, &quic.Config{MaxIdleTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

func (s *h3Server) addr() string { return s.ln.Addr().String() }

func (s *h3Server) url() string { return "https://" + s.addr() + "/orders" }

func (s *h3Server) accept() {
	for {
		conn, err := s.ln.Accept(context.Background())
		if err != nil {
			return // the listener was closed
		}
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(conn) })
	}
}

func (s *h3Server) serve(conn *quic.Conn) {
	raw, err := s.srv.NewRawServerConn(conn)
	if err != nil {
		return // the connection closed during setup
	}
	s.wg.Go(func() {
		for {
			str, err := conn.AcceptUniStream(context.Background())
			if err != nil {
				return
			}
			s.wg.Go(func() { raw.HandleUnidirectionalStream(str) })
		}
	})
	for {
		str, err := conn.AcceptStream(context.Background())
		if err != nil {
			return
		}
		a := s.script(int(s.streams.Add(1)))
		switch a {
		case reject:
			s.rejected.Add(1)
			str.ReleaseStreamCredit()
			str.CancelRead(quic.StreamErrorCode(http3.ErrCodeRequestRejected))
			str.CancelWrite(quic.StreamErrorCode(http3.ErrCodeRequestRejected))
		case closeRejected:
			s.rejected.Add(1)
			conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
			return
		default:
			s.mu.Lock()
			s.actions[streamKey{conn.RemoteAddr().String(), str.StreamID()}] = a
			s.mu.Unlock()
			s.wg.Go(func() { raw.HandleRequestStream(str) })
		}
	}
}

// handle is the HTTP/3 handler: the streams that reach it are processed.
func (s *h3Server) handle(w http.ResponseWriter, r *http.Request) {
	got, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || string(got) != body {
		s.t.Errorf("server read %s %q, %v; want POST %q", r.Method, got, err, body)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.processed.Add(1)
	if s.actionOf(r) == abortAfterRead {
		s.aborted.Add(1)
		panic(http.ErrAbortHandler) // quic-go resets the stream with H3_INTERNAL_ERROR
	}
	io.WriteString(w, "created")
}

// actionOf returns the action chosen for r's stream when it was accepted.
func (s *h3Server) actionOf(r *http.Request) action {
	str, ok := r.Body.(interface{ StreamID() quic.StreamID })
	if !ok {
		s.t.Errorf("request body %T does not name its stream", r.Body)
		return process
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.actions[streamKey{r.RemoteAddr, str.StreamID()}]
}

// close stops the listener and every connection, and waits for all the
// server's goroutines.
func (s *h3Server) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serveQUIC listens on 127.0.0.1 with cert and runs serve for each
// connection, on a goroutine of its own (serve may start more on wg); it
// returns the listener's address and the connections accepted so far,
// and stops with the test: the listener and every connection closed, the
// goroutines waited for.
func serveQUIC(t *testing.T, cert tls.Certificate, serve func(conn *quic.Conn, wg *sync.WaitGroup)) (addr string, accepted func() []*quic.Conn) {
	t.Helper()
	ln, err := quic.ListenAddr("127.0.0.1:0", http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
		&quic.Config{MaxIdleTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []*quic.Conn
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return // the listener was closed
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { serve(conn, &wg) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.CloseWithError(0, "")
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), func() []*quic.Conn {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(conns)
	}
}

// always returns a script that answers every stream with a.
func always(a action) func(int) action { return func(int) action { return a } }

// firstN returns a script that answers the first n streams with a and
// processes the others.
func firstN(n int, a action) func(int) action {
	return func(i int) action {
		if i <= n {
			return a
		}
		return process
	}
}

// newCert returns a self-signed certificate for 127.0.0.1 and a pool that
// trusts it.
func newCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// newClient returns quic-go's HTTP/3 client transport trusting pool,
// closed when the test ends.
func newClient(t *testing.T, pool *x509.CertPool) *http3.Transport {
	t.Helper()
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		QUICConfig:      &quic.Config{MaxIdleTimeout: testTimeout},
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// post builds a replayable POST (http.NewRequest sets GetBody for a
// bytes.Reader) bounded by testTimeout.
func post(t *testing.T, url string) *http.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return string(b)
}
