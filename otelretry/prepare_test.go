// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// wireRecord is what a loopback server received of one request.
type wireRecord struct {
	Method           string
	ContentLength    int64
	TransferEncoding []string
	Body             string
	Header           http.Header
	Query            string
}

// recordingServer is a loopback server that records what it received and
// answers 411 to a write of unknown length, as S3 does.
type recordingServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []wireRecord
}

func newRecordingServer(t *testing.T, tls bool) *recordingServer {
	s := &recordingServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, wireRecord{r.Method, r.ContentLength, r.TransferEncoding, string(b), r.Header.Clone(), r.URL.RawQuery})
		s.mu.Unlock()
		if len(r.TransferEncoding) > 0 {
			w.WriteHeader(http.StatusLengthRequired)
			return
		}
		io.WriteString(w, "ok")
	})
	if tls {
		s.Server = httptest.NewUnstartedServer(h)
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *recordingServer) received() []wireRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wireRecord(nil), s.seen...)
}

// A PrepareFunc cannot change what made a write repeatable between
// attempts: under the idempotency-key contract, a key stamped afresh for
// each attempt (or stripped) would let a timed-out POST be resent under a
// key the server never saw, which it cannot deduplicate. The contract is
// judged on the prepared request of the first attempt; a later attempt
// whose PrepareFunc changes the contract headers, the method or the host
// ends stop/prepare_failed before it is sent, and the write stays unknown.
func TestPrepareCannotChangeTheIdempotencyKey(t *testing.T) {
	cases := map[string]struct {
		prepare     func(r *http.Request, n int)
		wantPosts   int
		wantReason  attrs.Reason
		wantOutcome attrs.Outcome
	}{
		"a fresh key per attempt": {
			prepare:    func(r *http.Request, n int) { r.Header.Set("Idempotency-Key", fmt.Sprintf("gen-%d", n)) },
			wantPosts:  1,
			wantReason: attrs.ReasonPrepareFailed, wantOutcome: attrs.OutcomeStop,
		},
		"the key stripped on the second attempt": {
			prepare: func(r *http.Request, n int) {
				if n > 1 {
					r.Header.Del("Idempotency-Key")
				}
			},
			wantPosts:  1,
			wantReason: attrs.ReasonPrepareFailed, wantOutcome: attrs.OutcomeStop,
		},
		"the key stripped from the first attempt": {
			// Judged on the prepared request: no key, no contract.
			prepare:    func(r *http.Request, n int) { r.Header.Del("Idempotency-Key") },
			wantPosts:  1,
			wantReason: attrs.ReasonUnknownWrite, wantOutcome: attrs.OutcomeCheckState,
		},
		"the same key every attempt": {
			prepare:    func(r *http.Request, n int) { r.Header.Set("X-Attempt", fmt.Sprint(n)) },
			wantPosts:  2,
			wantReason: attrs.ReasonAttemptLimit, wantOutcome: attrs.OutcomeMaxAttempts,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Hang: true}},
					otelretry.WithIdempotencyKeyContract(), otelretry.WithMaxAttempts(2),
					otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
					otelretry.WithPrepareAttempt(func(r *http.Request, n int) error { tc.prepare(r, n); return nil }))
				req := post(t, t.Context(), "http://api.test/orders", `{"order":1}`)
				req.Header.Set("Idempotency-Key", "order-1")
				_, err := h.transprt.RoundTrip(req)
				if got := len(h.base.Calls()); got != tc.wantPosts {
					t.Errorf("the base received %d POSTs, want %d", got, tc.wantPosts)
				}
				var e *otelretry.Error
				if !errors.As(err, &e) || e.Reason != tc.wantReason || e.Outcome != tc.wantOutcome {
					t.Fatalf("err = %v, want %s (%s)", err, tc.wantOutcome, tc.wantReason)
				}
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v: a write that timed out and was not resent must match ErrOutcomeUnknown", err)
				}
				keys := map[string]bool{}
				for _, c := range h.base.Calls() {
					keys[c.Header.Get("Idempotency-Key")] = true
				}
				if len(keys) > 1 {
					t.Errorf("the server saw keys %v for one write", keys)
				}
			})
		})
	}
}

// The body a PrepareFunc gives a bodyless write is what is sent, with the
// framing it set: never replaced by an empty chunked body.
func TestPrepareBodyOfABodylessWriteIsSent(t *testing.T) {
	srv := newRecordingServer(t, false)
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	wrapped := roundTripFunc(inner.RoundTrip) // a wrapped base: no HTTP/1 guarantee known
	signed := []byte(`{"signed":true}`)
	tr := otelretry.NewTransport(wrapped, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
		r.Body = io.NopCloser(bytes.NewReader(signed))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(signed)), nil }
		r.ContentLength = int64(len(signed))
		return nil
	}))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/orders", nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := srv.received()
	if len(got) != 1 {
		t.Fatalf("the server received %d requests, want 1", len(got))
	}
	if got[0].Body != string(signed) || got[0].ContentLength != int64(len(signed)) || len(got[0].TransferEncoding) != 0 {
		t.Errorf("the server received body %q, Content-Length %d, Transfer-Encoding %v; want the prepared body %q with its length",
			got[0].Body, got[0].ContentLength, got[0].TransferEncoding, signed)
	}
}

// A resend below otelretry (net/http's, of a request that never left a
// dead keep-alive connection) sends the prepared request's bytes: a body
// signed in the PrepareFunc is never replaced by the caller's.
func TestPrepareBodyIsWhatABaseResendSends(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	var sigs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		sigs = append(sigs, r.Header.Get("X-Signature"))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base, poison := poisonableTransport(t)
	var stamp atomic.Int32
	sign := func(r *http.Request, n int) error {
		body := fmt.Sprintf("T%03d", stamp.Add(1))
		r.Body = io.NopCloser(strings.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
		r.Header.Set("X-Signature", "sig("+body+")")
		return nil
	}
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithPrepareAttempt(sign))}
	warm, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, warm.Body)
	warm.Body.Close()
	poison()
	mu.Lock()
	bodies, sigs = nil, nil
	mu.Unlock()

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL+"/objects/1", strings.NewReader("caller"))
	req.Header.Set("Idempotency-Key", "put-1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("the server received %d PUTs, want 1", len(bodies))
	}
	if sigs[0] != "sig("+bodies[0]+")" {
		t.Errorf("the server received body %q signed as %q: a resend below otelretry sent other bytes than the prepared request", bodies[0], sigs[0])
	}
}

// A PrepareFunc that replaces the body: the body it replaced (the
// caller's, then each GetBody copy) is closed exactly once.
func TestPrepareReplacedBodiesClosedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &countedBodies{getBodyOK: -1}
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.Body = io.NopCloser(strings.NewReader("replaced"))
				r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("replaced")), nil }
				r.ContentLength = int64(len("replaced"))
				return nil
			}))
		resp, err := h.transprt.RoundTrip(c.request(t, t.Context(), http.MethodPut, true))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.closes) != 2 {
			t.Fatalf("bodies handed out = %d, want 2 (the caller's and one GetBody copy)", len(c.closes))
		}
		for i, n := range c.closes {
			if n != 1 {
				t.Errorf("body %d closed %d times, want exactly once", i, n)
			}
		}
	})
}

// A URL that goes on the wire is sanitized wherever it is recorded, also
// when the PrepareFunc signed its query: on the CLIENT span, in the log
// record and in the error.
func TestPrepareSignedQueryIsSanitized(t *testing.T) {
	const secret = "s3cr3t-signature"
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var logs bytes.Buffer
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 2 {
			return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
		}
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("boom")}
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(2),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
			q := r.URL.Query()
			q.Set("X-Amz-Signature", secret)
			q.Set("access_token", secret)
			r.URL.RawQuery = q.Encode()
			return nil
		}))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/objects/1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, err = tr.RoundTrip(get(t, t.Context(), "http://api.test/objects/2"))
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error carries the signature: %v", err)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log record carries the signature: %s", logs.String())
	}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), secret) {
				t.Errorf("span %q: %s carries the signature", s.Name(), kv.Key)
			}
		}
		if strings.Contains(s.Status().Description, secret) {
			t.Errorf("span %q: its status carries the signature", s.Name())
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.Emit(), secret) {
					t.Errorf("span %q, event %s: %s carries the signature", s.Name(), e.Name, kv.Key)
				}
			}
		}
	}
	if n := len(spantest.Attempts(rec.Ended())); n != 4 {
		t.Errorf("attempt spans = %d, want 4", n)
	}
}

// A deadline that passes while a PrepareFunc waits on its context is the
// deadline: the operation ends deadline_exceeded and its error matches
// context.DeadlineExceeded, never context.Canceled (nobody canceled), for
// the Transport's deadline as for the caller's.
func TestPrepareDeadlineIsTheDeadline(t *testing.T) {
	for _, callers := range []bool{false, true} {
		t.Run(fmt.Sprintf("caller's deadline %v", callers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				waiting := func(r *http.Request, n int) error {
					<-r.Context().Done()
					return r.Context().Err()
				}
				h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPrepareAttempt(waiting), otelretry.WithDeadline(100*time.Millisecond))
				ctx := t.Context()
				if callers {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
					defer cancel()
				}
				_, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/items"))
				var oe *otelretry.Error
				if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeDeadlineExceeded {
					t.Fatalf("err = %v, want deadline_exceeded", err)
				}
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
					t.Errorf("err = %v: DeadlineExceeded %v, Canceled %v; want only DeadlineExceeded",
						err, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled))
				}
				if len(h.base.Calls()) != 0 {
					t.Error("a call was made after the deadline")
				}
			})
		})
	}
}

// A call made from a PrepareFunc through the same client (a token refresh)
// is an operation of its own: it takes neither the operation id, the
// Results slot nor a repeat marker from the calling operation, whose
// attempts stay numbered 1, 2 and whose count of writes on the wire is its
// own.
func TestCallFromAPrepareFuncIsItsOwnOperation(t *testing.T) {
	var orders atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			io.WriteString(w, "tok")
			return
		}
		if orders.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var client *http.Client
	refresh := func(r *http.Request, n int) error {
		if r.URL.Path == "/token" {
			return nil // the token call itself needs none
		}
		tr, err := client.Do(get(t, r.Context(), srv.URL+"/token"))
		if err != nil {
			return err
		}
		tok, _ := io.ReadAll(tr.Body)
		tr.Body.Close()
		r.Header.Set("Authorization", "Bearer "+string(tok))
		return nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithPrepareAttempt(refresh),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	var results otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-1"), &results)
	resp, err := client.Do(get(t, ctx, srv.URL+"/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	var own []string
	for _, a := range spantest.Attempts(rec.Ended()) {
		id := attrOf(a, attrs.RequestIDKey).AsString()
		if attrOf(a, attrs.OperationIDKey).AsString() == "op-1" {
			own = append(own, id)
			if w := attrOf(a, attrs.WireWritesKey).AsInt64(); w != 1 {
				t.Errorf("%s: retry.wire.writes = %d, want 1: the token call's writes were counted", id, w)
			}
		}
	}
	if fmt.Sprint(own) != "[op-1/attempt-1 op-1/attempt-2]" {
		t.Errorf("the operation's attempts are %v, want [op-1/attempt-1 op-1/attempt-2]", own)
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if _, ok := spantestAttr(op, attrs.RepeatKey); ok {
			t.Errorf("operation %s carries retry.operation.repeat: a call from a hook counted as a repeat", attrOf(op, attrs.OperationIDKey).AsString())
		}
	}
	if ops := results.Operations(); len(ops) != 1 || ops[0].OperationID != "op-1" {
		t.Errorf("results = %+v, want the calling operation alone", ops)
	}
}
