// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// h2Action is what the frame-level h2c server does with one complete
// request (after its END_STREAM).
type h2Action int

const (
	h2OK             h2Action = iota // HEADERS :status 200, END_STREAM: processed
	h2Refuse                         // RST_STREAM REFUSED_STREAM: not processed
	h2Protocol                       // processed, then RST_STREAM PROTOCOL_ERROR (a proxy that broke the answer)
	h2GoAway                         // GOAWAY whose last stream id is below the stream, then close: not processed
	h2GoAwayCalm                     // the same with ENHANCE_YOUR_CALM (a server shedding load): not processed
	h2BadFieldName                   // :status 200 and a field whose name is no token, holding h2Secret
	h2BadPseudo                      // :status 200 and an unknown pseudo-header holding h2Secret
	h2GoAwayDebug                    // GOAWAY counting the stream, its debug data h2Secret, then close
	h2BadPseudoValue                 // :status 200 and an unknown pseudo-header holding h2Secret, its value a control byte
)

// h2Secret is what h2BadFieldName, h2BadPseudo and h2GoAwayDebug write
// into the frames net/http quotes in its errors.
const h2Secret = "sk_live_H2SECRET42"

// hpackLiteral is a header field as HPACK's literal without indexing, a
// new name, no Huffman coding (RFC 7541, 6.2.2), for short fields.
func hpackLiteral(name, value string) []byte {
	b := append([]byte{0x00, byte(len(name))}, name...)
	return append(append(b, byte(len(value))), value...)
}

// h2Server is a minimal prior-knowledge HTTP/2 server on 127.0.0.1 that
// speaks just enough of the protocol (RFC 9113) for net/http's client:
// it plays actions in order, one per complete request, and counts the
// requests it processed (h2OK and h2Protocol).
type h2Server struct {
	ln        net.Listener
	mu        sync.Mutex
	actions   []h2Action
	next      int
	processed atomic.Int32
	conns     []net.Conn
	wg        sync.WaitGroup
	scheme    string
}

func newH2Server(t *testing.T, actions ...h2Action) *h2Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startH2Server(t, ln, actions)
}

// newH2TLSServer is the same server behind TLS, negotiating h2 by ALPN as
// real HTTP/2 servers do, and the client transport that trusts it: a host
// that net/http learns speaks HTTP/2 only from its first connection.
func newH2TLSServer(t *testing.T, actions ...h2Action) (*h2Server, *http.Transport) {
	borrowed := httptest.NewUnstartedServer(nil) // for its certificate
	borrowed.StartTLS()
	cert, roots := borrowed.TLS.Certificates[0], x509.NewCertPool()
	roots.AddCert(borrowed.Certificate())
	borrowed.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := startH2Server(t, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}}), actions)
	s.scheme = "https"
	return s, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
}

func startH2Server(t *testing.T, ln net.Listener, actions []h2Action) *h2Server {
	s := &h2Server{ln: ln, actions: actions, scheme: "http"}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *h2Server) url() string { return s.scheme + "://" + s.ln.Addr().String() }

func (s *h2Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

func (s *h2Server) action() h2Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.actions[min(s.next, len(s.actions)-1)]
	s.next++
	return a
}

func writeFrame(w io.Writer, typ, flags byte, stream uint32, payload []byte) error {
	var h [9]byte
	h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	h[3], h[4] = typ, flags
	binary.BigEndian.PutUint32(h[5:], stream)
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func (s *h2Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	preface := make([]byte, len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	if _, err := io.ReadFull(r, preface); err != nil {
		return
	}
	if writeFrame(c, 0x4, 0, 0, nil) != nil { // SETTINGS
		return
	}
	for {
		var h [9]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, stream := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return
		}
		switch typ {
		case 0x4: // SETTINGS
			if flags&0x1 == 0 {
				writeFrame(c, 0x4, 0x1, 0, nil)
			}
		case 0x6: // PING
			if flags&0x1 == 0 {
				writeFrame(c, 0x6, 0x1, 0, payload)
			}
		case 0x0, 0x1: // DATA, HEADERS
			if flags&0x1 == 0 { // not END_STREAM yet
				continue
			}
			var code uint32
			switch a := s.action(); a {
			case h2OK:
				s.processed.Add(1)
				writeFrame(c, 0x1, 0x5, stream, []byte{0x88}) // :status 200, END_HEADERS|END_STREAM
				continue
			case h2Refuse:
				code = 0x7
			case h2Protocol:
				s.processed.Add(1)
				code = 0x1
			case h2BadFieldName, h2BadPseudo, h2BadPseudoValue:
				field := hpackLiteral("retry-after/"+h2Secret, "1")
				switch a {
				case h2BadPseudo:
					field = hpackLiteral(":retry-after-"+h2Secret, "1")
				case h2BadPseudoValue: // the value is checked first, and its error quotes the name
					field = hpackLiteral(":retry-after-"+h2Secret, "\x01")
				}
				writeFrame(c, 0x1, 0x5, stream, append([]byte{0x88}, field...))
				continue
			case h2GoAwayDebug:
				var p [8]byte // the stream counted, NO_ERROR; then the debug data
				binary.BigEndian.PutUint32(p[:4], stream)
				writeFrame(c, 0x7, 0, 0, append(p[:], h2Secret...))
				return
			case h2GoAway, h2GoAwayCalm:
				var p [8]byte // last stream id below this one, NO_ERROR or ENHANCE_YOUR_CALM
				binary.BigEndian.PutUint32(p[:4], max(stream, 2)-2)
				if a == h2GoAwayCalm {
					binary.BigEndian.PutUint32(p[4:], 0xb)
				}
				writeFrame(c, 0x7, 0, 0, p[:])
				return // graceful shutdown: the connection closes
			}
			var p [4]byte
			binary.BigEndian.PutUint32(p[:], code)
			writeFrame(c, 0x3, 0, stream, p[:])
		}
	}
}

func h2cTransport() *http.Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: &p}
}

// The first write to a new HTTP/2 host: a POST with a body, the first
// request to a TLS server that negotiates h2 by ALPN. Every case the
// HTTP/2 table of docs/layers.md calls "not processed" (REFUSED_STREAM, a GOAWAY
// whose last stream id is below the request's) reaches the server exactly
// once, with its body, as on a host already known to speak HTTP/2; a
// PROTOCOL_ERROR after processing stays an unknown outcome.
func TestH2FirstWriteToANewHost(t *testing.T) {
	cases := []struct {
		name          string
		actions       []h2Action
		key           bool
		wantProcessed int32
		wantOK        bool
	}{
		{"GOAWAY", []h2Action{h2GoAway, h2OK}, false, 1, true},
		{"GOAWAY, keyed", []h2Action{h2GoAway, h2OK}, true, 1, true},
		{"REFUSED_STREAM", []h2Action{h2Refuse, h2OK}, false, 1, true},
		{"PROTOCOL_ERROR", []h2Action{h2Protocol, h2OK}, false, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, base := newH2TLSServer(t, tc.actions...)
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url()+"/orders", strings.NewReader(`{"order":1}`))
			if tc.key {
				req.Header.Set("Idempotency-Key", "order-1")
			}
			resp, err := client.Do(req)
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if got := srv.processed.Load(); got != tc.wantProcessed {
				t.Errorf("the server processed %d POSTs, want %d (err %v)", got, tc.wantProcessed, err)
			}
			if tc.wantOK && err != nil {
				t.Errorf("err = %v; want the 200 after the refused stream", err)
			}
			if !tc.wantOK && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want ErrOutcomeUnknown", err)
			}
		})
	}
}

// rawReplyServer is a loopback HTTP/1.1 server that reads each request
// whole, counts it, and answers with the raw bytes of reply(n), n counting
// from 1, then closes the connection.
func rawReplyServer(t *testing.T, reply func(n int64) string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := count.Add(1)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString(reply(n))
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

// An HTTP/1 server cannot forge HTTP/2's proof: a POST it processed and
// answered with a malformed header line quoting net/http's HTTP/2 messages
// (a graceful GOAWAY, REFUSED_STREAM) is processed once, and its outcome
// is unknown.
func TestHTTP1AnswerQuotingHTTP2ErrorsProvesNothing(t *testing.T) {
	for name, cause := range map[string]string{
		"goaway":         "http2: Transport received Server's graceful shutdown GOAWAY",
		"refused stream": "stream error: stream ID 1; REFUSED_STREAM",
	} {
		t.Run(name, func(t *testing.T) {
			srv, posts := rawReplyServer(t, func(int64) string {
				return "HTTP/1.1 200 OK\r\nX[http2: Transport: cannot retry err [" + cause +
					"] after Request.Body was written\r\n\r\n"
			})
			rt := otelretry.NewTransport(http.DefaultTransport.(*http.Transport).Clone(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithMaxAttempts(3))
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/charge", strings.NewReader(`{"amount":100}`))
			resp, err := rt.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := posts.Load(); got != 1 {
				t.Errorf("server processed the POST %d times, want 1 (a written write with no proof is never resent)", got)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want ErrOutcomeUnknown", err)
			}
		})
	}
}

// Over net/http's prior-knowledge h2c transport, a guarded POST with a
// body refused twice (REFUSED_STREAM, then a GOAWAY below its stream) is
// resent by otelretry with the evidence each time and processed exactly
// once; the resends are otelretry's attempts, each with one write on the
// wire.
func TestH2WriteRefusedTwiceIsResentWithTheEvidenceAndProcessedOnce(t *testing.T) {
	srv := newH2Server(t, h2Refuse, h2GoAway, h2OK)
	base := h2cTransport()
	defer base.CloseIdleConnections()
	rec, opts := tracingProviders()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))...)
	req, _ := http.NewRequest(http.MethodPost, srv.url()+"/orders", strings.NewReader(`{"order":1}`))
	req.Header.Set("Idempotency-Key", "order-1")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	resp.Body.Close()
	if got := srv.processed.Load(); got != 1 {
		t.Errorf("processed %d, want 1", got)
	}
	var got []string
	for _, s := range spantest.Attempts(rec.Ended()) {
		got = append(got, fmt.Sprintf("%s/%s/%d", attrOf(s, attrs.DecisionKey).AsString(),
			attrOf(s, attrs.ErrorClassKey).AsString(), attrOf(s, attrs.WireWritesKey).AsInt64()))
	}
	want := "[retry/refused_stream/1 retry/refused_stream/1 return//1]"
	if fmt.Sprint(got) != want {
		t.Errorf("attempts = %v, want %s", got, want)
	}
}

// net/http's HTTP/2 client resends a request by itself (with GetBody, or
// as it is when bodyless) after REFUSED_STREAM and GOAWAY, which prove the
// server did not process it, and also after a peer's RST_STREAM
// PROTOCOL_ERROR (golang/go#47635), which proves nothing. A write the
// policy does not treat as repeatable is never resent below the transport
// after it may have been written; a write provably never processed may
// still be; and the one resend the transport cannot stop (a bodyless
// write after PROTOCOL_ERROR) is counted.
func TestH2ResendsBelowTheTransportNeedProof(t *testing.T) {
	cases := []struct {
		name          string
		actions       []h2Action
		body          bool
		key           bool
		wantProcessed int32
		wantOK        bool // the operation returns the 200
		wantWrites    int64
	}{
		// The refused stream was never processed: net/http's HTTP/2 client
		// names the cause in its error (the guarded write has no GetBody
		// over HTTP/2), and otelretry resends it as a new attempt with the
		// evidence, processed exactly once.
		{name: "REFUSED_STREAM, write with body", actions: []h2Action{h2Refuse, h2OK}, body: true, key: true, wantProcessed: 1, wantOK: true},
		// A bodyless write is resent by net/http's HTTP/2 client as it is,
		// without asking: the refused stream was never processed, so the
		// server processes it exactly once.
		{name: "REFUSED_STREAM, bodyless write", actions: []h2Action{h2Refuse, h2OK}, body: false, key: true, wantProcessed: 1, wantOK: true},
		// Unsafe: the server processed the POST, then reset the stream.
		{name: "PROTOCOL_ERROR, write with body", actions: []h2Action{h2Protocol, h2OK}, body: true, wantProcessed: 1},
		// The known limit (docs/layers.md, "Below the transport"): net/http's HTTP/2
		// client resends a bodyless request after a peer's PROTOCOL_ERROR
		// without asking anyone, and otelretry does not change the request
		// to stop it; the resend is counted (retry.wire.writes=2).
		{name: "PROTOCOL_ERROR, bodyless write", actions: []h2Action{h2Protocol, h2OK}, body: false, wantProcessed: 2, wantOK: true, wantWrites: 2},
		{name: "PROTOCOL_ERROR, guarded write with body", actions: []h2Action{h2Protocol, h2OK}, body: true, key: true, wantProcessed: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newH2Server(t, tc.actions...)
			base := h2cTransport()
			defer base.CloseIdleConnections()
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
			var body io.Reader
			if tc.body {
				body = strings.NewReader(`{"order":1}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url()+"/orders", body)
			if tc.key {
				req.Header.Set("Idempotency-Key", "order-1")
			}
			resp, err := client.Do(req)
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if got := srv.processed.Load(); got != tc.wantProcessed {
				t.Errorf("the server processed %d POSTs, want %d (err %v)", got, tc.wantProcessed, err)
			}
			if tc.wantOK && err != nil {
				t.Errorf("err = %v; want the 200 after net/http's resend of a refused stream", err)
			}
			if !tc.wantOK && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want ErrOutcomeUnknown", err)
			}
			if tc.wantWrites > 0 {
				attempts := spantest.Attempts(rec.Ended())
				if got := attrOf(attempts[len(attempts)-1], attrs.WireWritesKey).AsInt64(); got != tc.wantWrites {
					t.Errorf("retry.wire.writes = %d, want %d: a resend below otelretry is counted", got, tc.wantWrites)
				}
			}
			if t.Failed() {
				for _, s := range spantest.Attempts(rec.Ended()) {
					t.Logf("attempt: decision=%s class=%s writes=%d", attrOf(s, attrs.DecisionKey).AsString(),
						attrOf(s, attrs.ErrorClassKey).AsString(), attrOf(s, attrs.WireWritesKey).AsInt64())
				}
			}
		})
	}
}

// Plain h2c traffic through the transport: three GETs answered over
// HTTP/2, with two spans each, the operation's and its attempt's.
func TestH2cGETsMakeAnOperationSpanAndAnAttemptSpanEach(t *testing.T) {
	srv := newH2Server(t, h2OK)
	base := h2cTransport()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
	for i := range 3 {
		resp, err := client.Get(srv.url() + fmt.Sprintf("/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("proto %s", resp.Proto)
		}
	}
	if n := len(rec.Ended()); n != 6 {
		t.Errorf("spans = %d, want 6", n)
	}
}

// A write queued behind another request is not made unknown by a cut that
// buys nothing. A POST (no state check, so a cut after it may have been
// written could not be followed up) waits 300ms behind a GET that holds
// the only slot, under a 100ms attempt timeout and a 5s deadline:
//   - over HTTP/2 (MaxConcurrentStreams 1, a client that keeps to it), it
//     waits for a stream on a connection it already got: nothing proves a
//     stream that never opened unsent, so the attempt timeout leaves that
//     wait to the deadline, and the POST is sent once the GET is answered;
//   - over HTTP/1.1 (one connection per host), it waits for a connection:
//     the attempt timeout cuts it, which proves it unsent, and it is
//     resent until the connection is free.
//
// Either way the POST is created once and returned, never unknown. Before,
// over HTTP/2 the cut ended it check_state (ErrOutcomeUnknown), created 0
// times.
func TestWriteQueuedBehindAnotherRequestIsNotUnknown(t *testing.T) {
	for _, proto := range []string{"HTTP/2", "HTTP/1.1"} {
		t.Run(proto, func(t *testing.T) {
			held, release := make(chan struct{}), make(chan struct{})
			var created atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					close(held)
					<-release
					return
				}
				io.Copy(io.Discard, r.Body)
				created.Add(1)
				w.WriteHeader(http.StatusCreated)
			}))
			srv.EnableHTTP2 = proto == "HTTP/2"
			srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1}
			srv.StartTLS()
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			base.MaxConnsPerHost = 1
			base.HTTP2 = &http.HTTP2Config{StrictMaxConcurrentRequests: true}
			if proto == "HTTP/1.1" {
				base.Protocols = new(http.Protocols)
				base.Protocols.SetHTTP1(true)
			}

			holder := make(chan error, 1)
			go func() {
				resp, err := base.RoundTrip(get(t, t.Context(), srv.URL+"/slot"))
				if err == nil {
					if resp.ProtoMajor != map[string]int{"HTTP/2": 2, "HTTP/1.1": 1}[proto] {
						err = fmt.Errorf("the holder went over %s", resp.Proto)
					}
					resp.Body.Close()
				}
				holder <- err
			}()
			<-held
			// Over HTTP/1.1 the slot frees halfway through the POST's second
			// attempt (each is cut while it waits for the connection), far
			// from either end of its attempt timeout: freed at a fixed time,
			// it met an attempt's timeout on a loaded machine, and the cut
			// came as the connection was got, after the request was written.
			// Over HTTP/2 the one attempt waits for its stream.
			var gets atomic.Int32
			freeAt := map[string]int32{"HTTP/2": 1, "HTTP/1.1": 2}[proto]
			ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GetConn: func(string) {
				if gets.Add(1) == freeAt {
					time.AfterFunc(50*time.Millisecond, func() { close(release) })
				}
			}})

			var results otelretry.Results
			tr := otelretry.NewTransport(base, otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(5*time.Second),
				otelretry.WithMaxAttempts(10), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
			resp, err := tr.RoundTrip(post(t, otelretry.WithResults(ctx, &results), srv.URL+"/orders", "order"))
			if err == nil {
				resp.Body.Close()
			}
			if err := <-holder; err != nil {
				t.Fatal(err)
			}
			ops := results.Operations()
			t.Logf("%s: the queued POST: err %v, created %d, %+v", proto, err, created.Load(), ops)
			if err != nil || resp.StatusCode != http.StatusCreated || errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v; want the 201", err)
			}
			if n := created.Load(); n != 1 {
				t.Errorf("created %d times, want once", n)
			}
			if len(ops) != 1 || ops[0].OutcomeUnknown || ops[0].Outcome != attrs.OutcomeReturn {
				t.Errorf("operations %+v; want one returned, its outcome known", ops)
			}
		})
	}
}

// docs/layers.md, the HTTP/2 table: a stream above a GOAWAY's last stream
// id, "a connection's first stream under a GOAWAY with an error code too,
// which net/http names in a message of its own", is read "by otelretry
// itself over net/http's transport (its error text)", decision "retry,
// class refused_stream, reason not_processed: processed once, on a new
// connection". net/http does not resend that stream whatever the request
// (its error is not a retryable one), so the same proof stands for a
// write without a body and for a GET, which otelretry read only for a write
// with a body sent without GetBody: a bodyless write ended check_state, a
// GET was retried as class other. Over h2c and over TLS (h2 by ALPN).
func TestAGoAwayWithACodeOnTheFirstStreamIsProofForEveryRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		body   string
		tls    bool
	}{
		{"POST with a body, h2c", http.MethodPost, `{"order":1}`, false},
		{"POST without a body, h2c", http.MethodPost, "", false},
		{"POST without a body, TLS", http.MethodPost, "", true},
		{"DELETE without a body, TLS", http.MethodDelete, "", true},
		{"GET, h2c", http.MethodGet, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *h2Server
			var base *http.Transport
			if tc.tls {
				srv, base = newH2TLSServer(t, h2GoAwayCalm, h2OK)
			} else {
				srv, base = newH2Server(t, h2GoAwayCalm, h2OK), h2cTransport()
			}
			defer base.CloseIdleConnections()
			rec, opts := tracingProviders()
			rt := otelretry.NewTransport(base, append(opts, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))...)
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.url()+"/orders", body)
			resp, err := rt.RoundTrip(req)
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil {
				t.Errorf("err = %v; want the 200 of the resend (the GOAWAY proves the first stream unprocessed)", err)
			}
			if got := srv.processed.Load(); got != 1 {
				t.Errorf("server processed %d, want 1", got)
			}
			a := spantest.Attempts(rec.Ended())
			if len(a) == 0 {
				t.Fatal("no attempt spans")
			}
			first := a[0]
			d, r, c, ev := attrOf(first, attrs.DecisionKey).AsString(), attrOf(first, attrs.ReasonKey).AsString(),
				attrOf(first, attrs.ErrorClassKey).AsString(), attrOf(first, attrs.EvidenceNameKey).AsString()
			if d != "retry" || r != string(attrs.ReasonNotProcessed) || c != string(attrs.ErrorClassRefusedStream) || ev != "GOAWAY" {
				t.Errorf("first attempt: decision=%s reason=%s class=%s evidence=%q; want retry/not_processed/refused_stream/GOAWAY", d, r, c, ev)
			}
		})
	}
}
