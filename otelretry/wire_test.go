// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
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
		h2GoAway:   "http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written",
		h2Refuse:   "http2: Transport: cannot retry err [stream error: stream ID 1; REFUSED_STREAM; received from peer] after Request.Body was written",
		h2Protocol: "http2: Transport: cannot retry err [stream error: stream ID 1; PROTOCOL_ERROR; received from peer] after Request.Body was written",
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
