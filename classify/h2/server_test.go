// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// testTimeout bounds every request, every connection and every wait of
// these tests, so that a failure ends them instead of hanging.
const testTimeout = 10 * time.Second

// body is what every test POSTs; the server checks it arrived whole.
const body = "order=42"

// Server actions on a request stream, chosen in the order the streams
// arrive (across connections).
type action int

const (
	// process: read the whole POST body, count it as processed, answer
	// 200.
	process action = iota
	// reject: RST_STREAM REFUSED_STREAM as soon as the HEADERS arrive,
	// before reading the body (RFC 9113 §8.7).
	reject
	// goAway: GOAWAY with a last stream id below the stream's as soon as
	// its HEADERS arrive (RFC 9113 §6.8): the stream is not processed.
	goAway
	// resetAfterRead: read the whole POST body, count it as processed,
	// then RST_STREAM INTERNAL_ERROR.
	resetAfterRead
)

// h2Server is an HTTP/2 server at the frame level (x/net's Framer) over
// cleartext TCP with prior knowledge (h2c), because Go's HTTP/2 server
// never refuses a stream on purpose.
type h2Server struct {
	t      *testing.T
	ln     net.Listener
	script func(n int) action // n counts request streams from 1

	streams   atomic.Int32 // request streams opened by clients
	rejected  atomic.Int32 // streams refused unread
	goaways   atomic.Int32 // streams excluded by a GOAWAY, unread
	processed atomic.Int32 // POSTs whose body was read whole
	resets    atomic.Int32 // processed POSTs then reset

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startH2 starts a server on 127.0.0.1 that treats the n-th request stream
// as script(n) says. It stops when the test ends.
func startH2(t *testing.T, script func(n int) action) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Server{t: t, ln: ln, script: script}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

func (s *h2Server) addr() string { return s.ln.Addr().String() }

func (s *h2Server) url() string { return "http://" + s.addr() + "/orders" }

func (s *h2Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // the listener was closed
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// stream is a request stream the server reads to its end.
type stream struct {
	act    action
	method string
	body   bytes.Buffer
}

func (s *h2Server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		s.t.Errorf("server read preface %q, %v", preface, err)
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var (
		hbuf bytes.Buffer
		henc = hpack.NewEncoder(&hbuf)
		open = map[uint32]*stream{}
	)
	// respond ends stream id with a 200 that carries text.
	respond := func(id uint32, text string) error {
		hbuf.Reset()
		henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		henc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(text))})
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
		return fr.WriteData(id, true, []byte(text))
	}
	// complete acts on a request whose body was read to its end.
	complete := func(id uint32, st *stream) error {
		delete(open, id)
		if st.method != http.MethodPost || st.body.String() != body {
			s.t.Errorf("server read %s %q; want POST %q", st.method, st.body.String(), body)
			return fr.WriteRSTStream(id, http2.ErrCodeProtocol)
		}
		s.processed.Add(1)
		if st.act == resetAfterRead {
			s.resets.Add(1)
			return fr.WriteRSTStream(id, http2.ErrCodeInternal)
		}
		return respond(id, "created")
	}

	if err := fr.WriteSettings(); err != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return // the client closed the connection, or the test ended
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				err = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				err = fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			id := f.StreamID
			switch act := s.script(int(s.streams.Add(1))); act {
			case reject:
				s.rejected.Add(1)
				err = fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
			case goAway:
				s.goaways.Add(1)
				err = fr.WriteGoAway(max(id, 2)-2, http2.ErrCodeNo, nil) // the stream before id

			default:
				st := &stream{act: act, method: f.PseudoValue("method")}
				open[id] = st
				if f.StreamEnded() {
					err = complete(id, st)
				}
			}
		case *http2.DataFrame:
			st := open[f.StreamID]
			if st == nil {
				break // a refused stream's body, never read
			}
			st.body.Write(f.Data())
			if f.StreamEnded() {
				err = complete(f.StreamID, st)
			}
		case *http2.RSTStreamFrame:
			delete(open, f.StreamID)
		}
		if err != nil {
			return
		}
	}
}

// close stops the listener and every connection, and waits for all the
// server's goroutines.
func (s *h2Server) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
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

// bundledTransport returns net/http's Transport speaking its bundled
// HTTP/2 client in cleartext with prior knowledge, closed when the test
// ends.
func bundledTransport(t *testing.T) *http.Transport {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// xnetTransport returns golang.org/x/net/http2's Transport in cleartext
// with prior knowledge, closed when the test ends.
func xnetTransport(t *testing.T) *http2.Transport {
	t.Helper()
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// xnetClientConn returns an x/net ClientConn on one new connection to
// srv; unlike the Transport, it never resends.
func xnetClientConn(t *testing.T, srv *h2Server) *http2.ClientConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", srv.addr(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := xnetTransport(t).NewClientConn(c)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// stdClientConn returns net/http's ClientConn (bundled HTTP/2) on one new
// connection to srv; unlike the Transport, it never resends.
func stdClientConn(t *testing.T, srv *h2Server) *http.ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cc, err := bundledTransport(t).NewClientConn(ctx, "http", srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
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
