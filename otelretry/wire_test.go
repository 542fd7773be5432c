// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The wire is the caller's: for every method, with and without a body and
// an idempotency key, over HTTP/1.1, HTTP/2 (TLS) and through a wrapped
// base, the server receives through otelretry exactly what it receives
// through the base alone: method, Content-Length, Transfer-Encoding, body
// and headers, apart from the propagators' trace headers.
func TestWireFramingIsTheCallers(t *testing.T) {
	type bodyKind int
	const (
		noBody bodyKind = iota
		emptyBody
		someBody
	)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2", "wrapped HTTP/1.1"} {
		t.Run(proto, func(t *testing.T) {
			srv := newRecordingServer(t, proto == "HTTP/2")
			inner := srv.Client().Transport.(*http.Transport).Clone()
			defer inner.CloseIdleConnections()
			var base http.RoundTripper = inner
			if strings.HasPrefix(proto, "wrapped") {
				base = roundTripFunc(inner.RoundTrip)
			}
			retrying := otelretry.NewTransport(base)
			for _, method := range methods {
				for _, kind := range []bodyKind{noBody, emptyBody, someBody} {
					for _, key := range []bool{false, true} {
						request := func() *http.Request {
							var body io.Reader
							switch kind {
							case emptyBody:
								body = strings.NewReader("")
							case someBody:
								body = strings.NewReader(`{"n":1}`)
							}
							req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+"/things", body)
							if key {
								req.Header.Set("Idempotency-Key", "k-1")
							}
							req.Header.Set("X-Caller", "yes")
							return req
						}
						name := fmt.Sprintf("%s body=%d key=%v", method, kind, key)
						for _, rt := range []http.RoundTripper{base, retrying} {
							resp, err := rt.RoundTrip(request())
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						got := srv.received()
						srv.mu.Lock()
						srv.seen = nil
						srv.mu.Unlock()
						if len(got) != 2 {
							t.Fatalf("%s: the server received %d requests, want 2", name, len(got))
						}
						alone, through := got[0], got[1]
						for _, h := range []string{"Traceparent", "Tracestate", "Baggage"} {
							through.Header.Del(h)
						}
						if alone.Method != through.Method || alone.ContentLength != through.ContentLength ||
							!slices.Equal(alone.TransferEncoding, through.TransferEncoding) || alone.Body != through.Body ||
							fmt.Sprint(alone.Header) != fmt.Sprint(through.Header) {
							t.Errorf("%s:\n base alone: %s CL=%d TE=%v body=%q %v\nthrough otelretry: %s CL=%d TE=%v body=%q %v", name,
								alone.Method, alone.ContentLength, alone.TransferEncoding, alone.Body, alone.Header,
								through.Method, through.ContentLength, through.TransferEncoding, through.Body, through.Header)
						}
					}
				}
			}
		})
	}
}

// signingBase signs what it sends, as request-signing transports (AWS
// SigV4 and its kin) do: over every header, by ranging over the map and
// lowering the names, never by looking one up.
type signingBase struct{ next http.RoundTripper }

func signature(h http.Header) string {
	var lines []string
	for k, v := range h {
		switch strings.ToLower(k) {
		case "x-signature", "traceparent", "tracestate", "baggage", "user-agent", "accept-encoding", "content-length":
			continue
		}
		lines = append(lines, strings.ToLower(k)+":"+strings.Join(v, ","))
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

func (s signingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Signature", signature(r.Header))
	return s.next.RoundTrip(r)
}

// The one change otelretry makes to a guarded bodyless write's headers,
// the lower-case spelling of Idempotency-Key that keeps net/http's HTTP/1
// client from resending it unseen, reaches the server as the same header,
// and a base that signs the headers it sends still produces a signature
// the server verifies.
func TestWireSigningBaseVerifiesWithTheHiddenKey(t *testing.T) {
	var verified, sent atomic.Int32
	var keys sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		keys.Store(r.Header.Get("Idempotency-Key"), true)
		if r.Header.Get("X-Signature") == signature(r.Header) {
			verified.Add(1)
		}
	}))
	defer srv.Close()
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	tr := otelretry.NewTransport(signingBase{inner})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/orders", nil)
	req.Header.Set("Idempotency-Key", "order-7")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sent.Load() != 1 || verified.Load() != 1 {
		t.Errorf("the server received %d requests, %d with a signature it verified", sent.Load(), verified.Load())
	}
	if _, ok := keys.Load("order-7"); !ok {
		t.Errorf("the server did not receive the Idempotency-Key")
	}
	if req.Header.Get("Idempotency-Key") != "order-7" {
		t.Errorf("the caller's header was changed")
	}
}

// TestWireHiddenKeysKeepTheValuesOrder: a guarded bodyless write's
// idempotency keys move to the lower-case name (hideIdempotencyKeys) with
// their values in the order net/http writes them: a map holding both
// spellings (an SDK's "idempotency-key", the caller's canonical one)
// reaches the server as through the base alone, the canonical one's first,
// so that a server reading the first value keys the write on the same one.
func TestWireHiddenKeysKeepTheValuesOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, strings.Join(r.Header.Values("Idempotency-Key"), ",")+" "+strings.Join(r.Header.Values("X-Idempotency-Key"), ","))
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	base.DisableKeepAlives = true
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		mu.Lock()
		got = nil
		mu.Unlock()
		for _, rt := range []http.RoundTripper{base, otelretry.NewTransport(base)} {
			req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL, nil)
			req.Header["idempotency-key"] = []string{"sdk-key"}
			req.Header["Idempotency-Key"] = []string{"caller-key", "caller-key-2"}
			req.Header["x-idempotency-key"] = []string{"x-sdk"}
			req.Header["X-Idempotency-Key"] = []string{"x-caller"}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		mu.Lock()
		if len(got) != 2 || got[0] != got[1] {
			t.Errorf("%s: the server read %q through the base alone, then through otelretry", method, got)
		}
		mu.Unlock()
	}
}

// uploadingBase plays net/http's part in a request with a body, on
// virtual time: it takes a connection, writes the headers, reads the body
// (as slowly as the body delivers it), reports the request written, and
// answers after answerAfter, or never when answerAfter is 0.
type uploadingBase struct{ answerAfter time.Duration }

func (b uploadingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	trace := httptrace.ContextClientTrace(r.Context())
	trace.GotConn(httptrace.GotConnInfo{})
	trace.WroteHeaders()
	written := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r.Body)
		written <- err
	}()
	var err error
	select {
	case err = <-written:
	case <-r.Context().Done(): // net/http aborts the write and closes the connection
		err = r.Context().Err()
	}
	r.Body.Close()
	trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	if err != nil {
		return nil, err
	}
	if b.answerAfter == 0 {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	select {
	case <-time.After(b.answerAfter):
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// steadyBody delivers chunks bytes, one every interval, then EOF; with
// stall set it stops after the first chunk until its context ends.
type steadyBody struct {
	ctx      context.Context
	chunks   int
	interval time.Duration
	stall    bool
}

func (b *steadyBody) Read(p []byte) (int, error) {
	if b.chunks == 0 {
		return 0, io.EOF
	}
	if b.stall && b.chunks == 1 {
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	time.Sleep(b.interval)
	b.chunks--
	p[0] = 'x'
	return 1, nil
}

func (b *steadyBody) Close() error { return nil }

// The attempt timeout bounds getting a connection and writing the headers,
// then again the wait for the response headers once the request is
// written; the upload between is bounded by the deadline alone.
func TestWireAttemptTimeoutSparesTheUpload(t *testing.T) {
	cases := map[string]struct {
		body        func(ctx context.Context) *steadyBody
		answerAfter time.Duration
		wantErr     bool
		wantElapsed time.Duration // of the one attempt
		repeatable  bool          // Intent.Repeatable
	}{
		"a 400ms upload making progress, under a 150ms attempt timeout": {
			body: func(ctx context.Context) *steadyBody {
				return &steadyBody{ctx: ctx, chunks: 10, interval: 40 * time.Millisecond}
			},
			answerAfter: 100 * time.Millisecond, wantElapsed: 500 * time.Millisecond,
		},
		"no answer after the upload of a repeatable PUT: the attempt timeout, counted from the upload's end": {
			body: func(ctx context.Context) *steadyBody {
				return &steadyBody{ctx: ctx, chunks: 10, interval: 40 * time.Millisecond}
			},
			repeatable: true,
			wantErr:    true, wantElapsed: 400*time.Millisecond + 150*time.Millisecond,
		},
		"no answer after the upload of a write: the deadline, since a cut could not be retried": {
			body: func(ctx context.Context) *steadyBody {
				return &steadyBody{ctx: ctx, chunks: 10, interval: 40 * time.Millisecond}
			},
			wantErr: true, wantElapsed: time.Second,
		},
		"a stalled upload: the deadline": {
			body: func(ctx context.Context) *steadyBody {
				return &steadyBody{ctx: ctx, chunks: 2, interval: time.Millisecond, stall: true}
			},
			wantErr: true, wantElapsed: time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tr := otelretry.NewTransport(uploadingBase{tc.answerAfter},
					otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
					otelretry.WithAttemptTimeout(150*time.Millisecond), otelretry.WithDeadline(time.Second), otelretry.WithMaxAttempts(1))
				ctx, cancel := context.WithCancel(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: tc.repeatable}))
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/upload", nil)
				req.Body = tc.body(ctx)
				req.ContentLength = -1
				resp, err := tr.RoundTrip(req)
				if (err != nil) != tc.wantErr {
					t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
				}
				if err == nil {
					resp.Body.Close()
				}
				attempts := spantest.Attempts(rec.Ended())
				if len(attempts) != 1 {
					t.Fatalf("attempt spans = %d, want 1", len(attempts))
				}
				if got := time.Duration(attrOf(attempts[0], attrs.ElapsedMsKey).AsInt64()) * time.Millisecond; got != tc.wantElapsed {
					t.Errorf("the attempt took %v, want %v", got, tc.wantElapsed)
				}
			})
		})
	}
}

// A small failed answer of known length is drained before the next
// attempt even with no pause at all, so its connection is kept: the
// server sees one connection, not one per retry.
func TestWireZeroPauseKeepsTheConnection(t *testing.T) {
	var conns, requests atomic.Int32
	body := strings.Repeat("x", 1024)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1)%3 != 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, body)
			return
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	for _, pause := range []time.Duration{0, 100 * time.Microsecond} {
		conns.Store(0)
		tr := otelretry.NewTransport(inner, otelretry.WithBackoff(otelretry.ConstantBackoff(pause)), otelretry.WithoutBudget())
		for range 50 {
			resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// One connection; a few more allow for a drain cut by a slow,
		// loaded machine.
		if n := conns.Load(); n > 5 {
			t.Errorf("pause %v: 150 attempts opened %d connections", pause, n)
		}
	}
}

// Over HTTP/2, a write the protocol proves unprocessed reaches the server
// exactly once: a stream above a GOAWAY's last stream id, or a refused
// one, is resent by otelretry as a new attempt that carries the evidence.
// A peer's PROTOCOL_ERROR after the server read the body proves nothing:
// one processed, check_state.
func TestWireH2UnprocessedWritesReachTheServerOnce(t *testing.T) {
	cases := []struct {
		name          string
		action        h2Action
		key           bool
		wantProcessed int32
		wantEvidence  string // "": none, and check_state
	}{
		{"GOAWAY", h2GoAway, false, 1, "GOAWAY"},
		{"GOAWAY, with an Idempotency-Key", h2GoAway, true, 1, "GOAWAY"},
		// net/http names a GOAWAY with an error code on a connection's
		// first stream in another message, which it does not retry; it
		// was read as no proof (check_state).
		{"GOAWAY, ENHANCE_YOUR_CALM, the connection's first stream", h2GoAwayCalm, false, 1, "GOAWAY"},
		{"REFUSED_STREAM", h2Refuse, false, 1, "REFUSED_STREAM"},
		{"PROTOCOL_ERROR", h2Protocol, false, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newH2Server(t, tc.action, h2OK)
			base := h2cTransport()
			defer base.CloseIdleConnections()
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)))}
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
			attempts := spantest.Attempts(rec.Ended())
			if tc.wantEvidence == "" {
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v, want ErrOutcomeUnknown", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v, want the 200 of the resend", err)
			}
			if len(attempts) != 2 {
				t.Fatalf("attempt spans = %d, want 2", len(attempts))
			}
			first := attempts[0]
			if got := attrOf(first, attrs.EvidenceNameKey).AsString(); got != tc.wantEvidence {
				t.Errorf("retry.evidence.name = %q, want %q", got, tc.wantEvidence)
			}
			// REFUSED_STREAM is a code; net/http's error names a GOAWAY
			// whatever its code (NO_ERROR, ENHANCE_YOUR_CALM), so it
			// records none rather than an invented 0.
			code, hasCode := spantest.Attr(first, attrs.EvidenceCodeKey)
			if wantCode := tc.wantEvidence == "REFUSED_STREAM"; hasCode != wantCode || (wantCode && code.AsInt64() != 7) {
				t.Errorf("retry.evidence.code = %v (recorded %v) for %s", code.Emit(), hasCode, tc.wantEvidence)
			}
			if got := attrOf(first, attrs.ErrorClassKey).AsString(); got != string(attrs.ErrorClassRefusedStream) {
				t.Errorf("error class = %q, want refused_stream", got)
			}
			if got := attrOf(first, attrs.ReasonKey).AsString(); got != string(attrs.ReasonNotProcessed) {
				t.Errorf("reason = %q, want not_processed", got)
			}
		})
	}
}

// net/http's HTTP/2 client names the cause of a stream it would resend
// only in its error text when the request has no GetBody. otelretry reads
// that text in one place; these are the messages it reads, as the Go
// release in use writes them. This test fails when a release changes them.
func TestH2UnprocessedMessages(t *testing.T) {
	for action, want := range map[h2Action]string{
		h2GoAway:     "http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written",
		h2GoAwayCalm: "http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM",
		h2Refuse:     "http2: Transport: cannot retry err [stream error: stream ID 1; REFUSED_STREAM; received from peer] after Request.Body was written",
		h2Protocol:   "http2: Transport: cannot retry err [stream error: stream ID 1; PROTOCOL_ERROR; received from peer] after Request.Body was written",
	} {
		srv := newH2Server(t, action, h2OK)
		base := h2cTransport()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url()+"/orders", strings.NewReader("order"))
		req.GetBody = nil
		_, err := base.RoundTrip(req)
		base.CloseIdleConnections()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("net/http's HTTP/2 client said %v; otelretry reads %q", err, want)
		}
	}
}

// dropSecondRequest is a loopback server that answers the first request
// on each connection and, for the second, reads it whole, counts it, and
// closes the connection without answering: a keep-alive connection that
// died after the request was written, on which net/http resends what it
// deems replayable.
type dropSecondRequest struct {
	srv      *httptest.Server
	received sync.Map // method -> *atomic.Int64
	perConn  sync.Map // remote addr -> *atomic.Int64
}

func (d *dropSecondRequest) count(method string) int64 {
	if c, ok := d.received.Load(method); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func newDropSecondRequest(t *testing.T) *dropSecondRequest {
	d := &dropSecondRequest{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n, _ := d.perConn.LoadOrStore(r.RemoteAddr, new(atomic.Int64))
		count, _ := d.received.LoadOrStore(r.Method, new(atomic.Int64))
		count.(*atomic.Int64).Add(1)
		if n.(*atomic.Int64).Add(1) == 2 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(d.srv.Close)
	return d
}

// A write that the policy does not treat as repeatable is never resent by
// net/http behind the transport's back, even with an Idempotency-Key that
// makes net/http deem it replayable: the server receives one POST and the
// outcome is unknown. A GET on the same path is resent by net/http, and
// the attempt span shows the second write.
func TestNetHTTPDoesNotResendAWriteUnseen(t *testing.T) {
	for _, withBody := range []bool{true, false} {
		t.Run(map[bool]string{true: "body", false: "no body"}[withBody], func(t *testing.T) {
			d := newDropSecondRequest(t)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := d.srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
			client := &http.Client{Transport: tr}

			warm, _ := client.Get(d.srv.URL) // opens the keep-alive connection
			io.Copy(io.Discard, warm.Body)
			warm.Body.Close()

			var body io.Reader
			if withBody {
				body = strings.NewReader(`{"order":1}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.srv.URL+"/orders", body)
			req.Header.Set("Idempotency-Key", "key-1")
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
			}
			if n := d.count(http.MethodPost); n != 1 {
				t.Fatalf("the server received %d POSTs, want 1", n)
			}
			attempts := spantest.Attempts(rec.Ended())
			last := attempts[len(attempts)-1]
			if got := attrOf(last, attrs.DecisionKey).AsString(); got != "check_state" {
				t.Errorf("decision = %s, want check_state", got)
			}
		})
	}

	t.Run("GET is resent by net/http, and shown", func(t *testing.T) {
		d := newDropSecondRequest(t)
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		base := d.srv.Client().Transport.(*http.Transport).Clone()
		defer base.CloseIdleConnections()
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
		for range 2 {
			resp, err := client.Get(d.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if n := d.count(http.MethodGet); n != 3 {
			t.Fatalf("the server received %d GETs, want 3 (the second one twice)", n)
		}
		attempts := spantest.Attempts(rec.Ended())
		if len(attempts) != 2 {
			t.Fatalf("attempt spans = %d, want 2: net/http's resend is not an attempt of ours", len(attempts))
		}
		second := attempts[1]
		for _, a := range attempts {
			if attrOf(a, attrs.WireWritesKey).AsInt64() == 2 {
				second = a
			}
		}
		if got := attrOf(second, attrs.WireWritesKey).AsInt64(); got != 2 {
			t.Fatalf("retry.wire.writes = %d, want 2", got)
		}
		var resends int
		for _, e := range second.Events() {
			if e.Name == attrs.EventWireResend {
				resends++
			}
		}
		if resends != 1 {
			t.Errorf("wire_resend events = %d, want 1", resends)
		}
		if _, ok := spantestAttr(second, attrs.HTTPRequestResendCountKey); ok {
			t.Errorf("http.request.resend_count on a first attempt: it counts this library's attempts only")
		}
	})
}

// A request that never left the client may still be resent by net/http,
// even a write: the guard refuses only once the request was written.
func TestNetHTTPStillResendsARequestThatWasNeverWritten(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base, poison := poisonableTransport(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
	keepDeadConnection(t, client, srv.URL, poison) // the idle connection now fails before writing

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/orders", strings.NewReader("order"))
	req.Header.Set("Idempotency-Key", "key-2")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("err = %v: a request that was never written was not resent", err)
	}
	resp.Body.Close()
	if posts.Load() != 1 {
		t.Fatalf("the server received %d POSTs, want 1", posts.Load())
	}
}

// A request the policy may repeat, with a body, sent on a keep-alive
// connection that turned out dead: net/http resends it by itself and
// dials again, and that dial hangs. Its headers were reported written,
// which left the upload to the deadline; the connection got again for the
// resend is bounded by the attempt timeout as the first was, so the dial
// is cut after 100 ms and the operation's retry gets its answer. Before,
// nothing moved the bound back: the dial was cut only at the 2 s deadline
// and the operation ended deadline_exceeded.
func TestAConnectionNetHTTPGetsToResendIsBoundByTheAttemptTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base, poison := poisonableTransport(t)
	var dials atomic.Int32
	dial := base.DialContext
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 2 { // net/http's resend: the dial hangs until it is cut
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return dial(ctx, network, addr)
	}
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(2*time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
	keepDeadConnection(t, client, srv.URL, poison) // the idle connection is dead

	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}) // a search sent as a POST
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/search", strings.NewReader(`{"q":"x"}`))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("err = %v after %v: the resend's dial was not cut by the attempt timeout", err, time.Since(start))
	}
	resp.Body.Close()
	if dials.Load() != 3 {
		t.Errorf("%d dials, want 3: the warm-up's, net/http's resend's (cut), the retry's", dials.Load())
	}
}

// stallFirst is a listener whose first accepted connection is never
// served: a TLS client's handshake on it stalls. Later connections reach
// the server.
type stallFirst struct {
	net.Listener
	mu      sync.Mutex
	stalled []net.Conn
}

func (l *stallFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		first := len(l.stalled) == 0
		if first {
			l.stalled = append(l.stalled, c)
		}
		l.mu.Unlock()
		if !first {
			return c, nil
		}
	}
}

func (l *stallFirst) Close() error {
	l.mu.Lock()
	for _, c := range l.stalled {
		c.Close()
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// A cut proves only what it proves: a POST whose dial, or whose TLS
// handshake, was cut (by the attempt timeout, or by the base's own
// TLSHandshakeTimeout) never had a connection and wrote nothing, so it was
// not sent: it is retried as a refused dial is (reason not_processed), and
// the server executes it exactly once.
func TestCutBeforeAConnectionIsNotAnUnknownWrite(t *testing.T) {
	var posts atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		posts.Add(1)
		io.WriteString(w, "created")
	})
	cases := map[string]func(t *testing.T) (url string, base *http.Transport, opts []otelretry.Option){
		"the dial, cut by the attempt timeout": func(t *testing.T) (string, *http.Transport, []otelretry.Option) {
			srv := httptest.NewServer(handler)
			t.Cleanup(srv.Close)
			var dials atomic.Int32
			base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if dials.Add(1) == 1 {
					<-ctx.Done() // a host that does not answer the SYN
					return nil, ctx.Err()
				}
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			}}
			return srv.URL, base, []otelretry.Option{otelretry.WithAttemptTimeout(300 * time.Millisecond)}
		},
		"the TLS handshake, cut by the base's TLSHandshakeTimeout": func(t *testing.T) (string, *http.Transport, []otelretry.Option) {
			srv := httptest.NewUnstartedServer(handler)
			srv.Listener = &stallFirst{Listener: srv.Listener}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			base := srv.Client().Transport.(*http.Transport).Clone()
			base.TLSHandshakeTimeout = 300 * time.Millisecond
			return srv.URL, base, nil
		},
		"the TLS handshake, cut by the attempt timeout": func(t *testing.T) (string, *http.Transport, []otelretry.Option) {
			srv := httptest.NewUnstartedServer(handler)
			srv.Listener = &stallFirst{Listener: srv.Listener}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			return srv.URL, srv.Client().Transport.(*http.Transport).Clone(), []otelretry.Option{otelretry.WithAttemptTimeout(300 * time.Millisecond)}
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			posts.Store(0)
			url, base, opts := setup(t)
			defer base.CloseIdleConnections()
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			opts = append(opts, otelretry.WithTracerProvider(tp), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
				otelretry.WithMaxAttempts(5))
			client := &http.Client{Transport: otelretry.NewTransport(base, opts...)}
			resp, err := client.Do(post(t, t.Context(), url+"/orders", "order"))
			if err != nil {
				t.Fatalf("err = %v; want the create, retried after a cut that proved it unsent", err)
			}
			resp.Body.Close()
			if got := posts.Load(); got != 1 {
				t.Errorf("the server executed %d creates, want 1", got)
			}
			// A loaded machine may cut a later attempt before its connection
			// too: each such cut is retried the same way.
			attempts := spantest.Attempts(rec.Ended())
			if len(attempts) < 2 {
				t.Fatalf("attempts = %d, want the cut one and the one answered", len(attempts))
			}
			for _, a := range attempts[:len(attempts)-1] {
				if d, r := attrOf(a, attrs.DecisionKey).AsString(), attrOf(a, attrs.ReasonKey).AsString(); d != "retry" || r != "not_processed" {
					t.Errorf("cut attempt: %s (%s), want retry (not_processed)", d, r)
				}
				if c := attrOf(a, attrs.ErrorClassKey).AsString(); c != "timeout" {
					t.Errorf("cut attempt's class %q, want timeout: the cut is recorded as what it was", c)
				}
			}
		})
	}
}

// A base that reports nothing through httptrace proves nothing by a cut:
// a POST it never answered stays unknown. The attempt timeout does not cut
// it either (a cut could not be retried): the deadline does.
func TestCutOfASilentBaseProvesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(time.Second))
		start := time.Now()
		_, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("err = %v, want ErrOutcomeUnknown", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("the write was cut after %v, want at the deadline (1s)", got)
		}
	})
}

// The first write with a body to an https host otelretry has not seen yet
// goes without a GetBody (it may speak HTTP/2, whose client names a
// refused stream only without one). When the host speaks HTTP/1 and the
// connection, reused from the base's pool, fails before a byte of the
// request is written, net/http does not resend it without a GetBody; the
// failure comes back, and what httptrace reported proves the request
// unsent: otelretry resends it, and the server executes it once.
func TestH1NothingWrittenToANewHostIsRetried(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base, poison := poisonableTransport(t)
	base.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	// The pooled connection comes from another user of the base, so the
	// Transport does not know the host.
	warm, err := base.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, warm.Body)
	warm.Body.Close()
	poison()

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	resp, err := client.Do(post(t, t.Context(), srv.URL+"/orders", "order"))
	if err != nil {
		t.Fatalf("err = %v: a request that was never written was not resent", err)
	}
	resp.Body.Close()
	if posts.Load() != 1 {
		t.Errorf("the server received %d POSTs, want 1", posts.Load())
	}
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) != 2 || attrOf(attempts[0], attrs.ReasonKey).AsString() != "not_processed" {
		for _, a := range attempts {
			t.Logf("attempt: %s (%s) class %s", attrOf(a, attrs.DecisionKey).AsString(), attrOf(a, attrs.ReasonKey).AsString(), attrOf(a, attrs.ErrorClassKey).AsString())
		}
		t.Errorf("want two attempts, the first retried as not_processed")
	}
}

// A write on an HTTP/1 keep-alive connection that dies after the request
// was written (a bodyless POST without a key, a DELETE with
// X-Idempotency-Key, a PUT and a PATCH with a body and Idempotency-Key or
// X-Idempotency-Key) reaches the server once, and its outcome is unknown.
func TestWritesOnADyingKeepAliveConnectionAreSentOnce(t *testing.T) {
	cases := []struct {
		method, header string
		body           bool
	}{
		{http.MethodPost, "", false},
		{http.MethodDelete, "X-Idempotency-Key", false},
		{http.MethodPut, "Idempotency-Key", true},
		{http.MethodPatch, "X-Idempotency-Key", true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s body=%v", tc.method, tc.header, tc.body), func(t *testing.T) {
			d := newDropSecondRequest(t)
			base := d.srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base)}
			warm, err := client.Get(d.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, warm.Body)
			warm.Body.Close()
			var body io.Reader
			if tc.body {
				body = strings.NewReader("payload")
			}
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, d.srv.URL+"/x", body)
			if tc.header != "" {
				req.Header.Set(tc.header, "k-1")
			}
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if n := d.count(tc.method); n != 1 {
				t.Errorf("server received %d, want 1", n)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want unknown", err)
			}
		})
	}
}

// The resend guard is set up on the prepared request: an Idempotency-Key
// that a PrepareAttemptFunc sets on each attempt, which makes net/http deem a
// POST replayable, does not let net/http resend the write unseen when its
// keep-alive connection dies: the server receives one POST, with a body
// or without.
func TestIdempotencyKeyAPrepareFuncAddsLetsNoWriteBeResentUnseen(t *testing.T) {
	for _, withBody := range []bool{true, false} {
		t.Run(fmt.Sprintf("body=%v", withBody), func(t *testing.T) {
			d := newDropSecondRequest(t)
			base := d.srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			tr := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.Header.Set("Idempotency-Key", "order-1")
				return nil
			}))
			client := &http.Client{Transport: tr}
			warm, err := client.Get(d.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, warm.Body)
			warm.Body.Close()
			var body io.Reader
			if withBody {
				body = strings.NewReader(`{"order":1}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.srv.URL+"/orders", body)
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if n := d.count(http.MethodPost); n != 1 {
				t.Errorf("the server received %d POSTs, want 1 (err %v)", n, err)
			}
		})
	}
}

// A base that calls GetBody itself to hash the payload before sending it
// once (request signing) is no resend: no attempt claims more than one
// write on the wire, nor a wire_resend event.
func TestBaseReadingGetBodyToSignIsNoResend(t *testing.T) {
	var received atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	defer srv.Close()
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	signer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.GetBody != nil { // hash the payload without consuming r.Body
			b, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			io.Copy(io.Discard, b)
			b.Close()
			r = r.Clone(r.Context())
			r.Header.Set("X-Signature", "sig")
		}
		return inner.RoundTrip(r)
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: otelretry.NewTransport(signer, otelretry.WithTracerProvider(tp))}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if received.Load() != 1 {
		t.Fatalf("server received %d requests", received.Load())
	}
	for _, s := range spantest.Attempts(rec.Ended()) {
		if w := attrOf(s, attrs.WireWritesKey).AsInt64(); w > 1 {
			t.Errorf("attempt span claims retry.wire.writes=%d; the server received 1 request", w)
		}
		for _, e := range s.Events() {
			if e.Name == attrs.EventWireResend {
				t.Errorf("attempt span has a %s event; nothing was resent", e.Name)
			}
		}
	}
}

// A ClientTrace in the caller's context keeps its hooks: the attempt's
// own are composed with it, as httptrace.WithClientTrace composes two
// traces, and the network hooks (ConnectStart) still reach it. The
// attempt still counts its write on the wire.
func TestCallersClientTraceRunsBesideTheAttempts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rt := otelretry.NewTransport(inner, otelretry.WithTracerProvider(tp))
	var connects, gotConns, reused, writes atomic.Int32
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		ConnectStart: func(string, string) { connects.Add(1) },
		GotConn: func(info httptrace.GotConnInfo) {
			gotConns.Add(1)
			if info.Reused {
				reused.Add(1)
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { writes.Add(1) },
	})
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if connects.Load() != 1 || gotConns.Load() != 2 || reused.Load() != 1 || writes.Load() != 2 {
		t.Errorf("the caller's hooks saw %d connects, %d connections (%d reused), %d writes; want 1, 2 (1), 2",
			connects.Load(), gotConns.Load(), reused.Load(), writes.Load())
	}
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(attempts))
	}
	for _, s := range attempts {
		if w := attrOf(s, attrs.WireWritesKey).AsInt64(); w != 1 {
			t.Errorf("attempt span has retry.wire.writes=%d, want 1", w)
		}
	}
}

// net/http's own resend of a read with a body, on a kept-alive connection
// the server closed after reading it, asks GetBody for the body again: one
// that returns neither a body nor an error is refused there with a clear
// error, where net/http alone would read the nil body and panic.
func TestNetHTTPsResendWithAGetBodyReturningNoBodyFailsCleanly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for conns := 0; ; conns++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn, first bool) {
				defer c.Close()
				br := bufio.NewReader(c)
				for served := 0; ; served++ {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					if first && served == 1 {
						return // read the second request, then close: no answer
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}(c, conns == 0)
		}
	}()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithoutBudget())}
	url := "http://" + ln.Addr().String() + "/search"
	warm, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, warm.Body)
	warm.Body.Close()

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, strings.NewReader("query"))
	req.GetBody = func() (io.ReadCloser, error) { return nil, nil }
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("answered: a resend went out without the body")
	}
	if !strings.Contains(err.Error(), "GetBody: returned a nil body") {
		t.Errorf("err = %v; want GetBody's nil body named", err)
	}
}
