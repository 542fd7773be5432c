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
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each attempt has its own header map in every sending mode: a base that
// sets a header never writes through to the caller's request.
func TestAttemptHeaderIsItsOwn(t *testing.T) {
	modes := map[string][]otelretry.Option{
		"client spans":         nil,
		"without client spans": {otelretry.WithoutClientSpans()},
		"no-op providers":      {otelretry.WithoutClientSpans(), otelretry.WithTracerProvider(nil)},
	}
	for name, opts := range modes {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r.Header.Set("X-Set-By-Base", "yes")
				return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, opts...)
			req := get(t, t.Context(), "http://api.test/items")
			req.Header.Set("Accept", "application/json")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := req.Header.Get("X-Set-By-Base"); got != "" {
				t.Errorf("the base's header reached the caller's request")
			}
		})
	}
}

// retry.deadline_ms is never negative, also for an operation that starts
// after its context's deadline.
func TestDeadlineMsNeverNegative(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-50*time.Millisecond))
	defer cancel()
	if _, err := tr.RoundTrip(get(t, ctx, "http://api.test/items")); err == nil {
		t.Fatal("want an error")
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if v := attrOf(op, attrs.DeadlineMsKey).AsInt64(); v < 0 {
			t.Errorf("retry.deadline_ms = %d", v)
		}
	}
}

// trailerBody is a request body that sets its request's trailer when it
// reaches EOF, as a body computing a checksum while it streams does.
type trailerBody struct {
	r       io.Reader
	trailer http.Header // the caller's Request.Trailer
	value   string
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.trailer.Set("X-Checksum", b.value)
	}
	return n, err
}

func (*trailerBody) Close() error { return nil }

// The trailers the caller's body sets while it is read reach the wire, in
// every sending mode, with and without a PrepareAttemptFunc, on the first attempt
// and on a retry (GetBody's body sets them again): net/http writes the
// sent request's Trailer map after the body's EOF, so the request that
// reaches the base holds the caller's map. A PrepareAttemptFunc that changes the
// trailers has its own map sent, and the caller's map is not written.
func TestTrailersTheBodySetsReachTheWire(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the trailer comes after the body
		mu.Lock()
		got = append(got, r.Trailer.Get("X-Checksum"))
		n := len(got)
		mu.Unlock()
		if r.Header.Get("X-Fail-First") == "1" && n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tp := sdktrace.NewTracerProvider()
	noopTracer, noopMeter := tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()
	modes := map[string][]otelretry.Option{
		"through otelhttp": {otelretry.WithTracerProvider(tp)},
		"own span":         {otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans()},
		"inject only":      {otelretry.WithTracerProvider(noopTracer), otelretry.WithMeterProvider(noopMeter)},
		"plain":            {otelretry.WithTracerProvider(noopTracer), otelretry.WithoutClientSpans()},
	}
	prepares := map[string]struct {
		f    otelretry.PrepareAttemptFunc
		want func(attempt int) string
	}{
		"no PrepareAttemptFunc": {nil, func(n int) string { return fmt.Sprintf("sum-%d", n) }},
		"PrepareAttemptFunc":    {func(r *http.Request, _ int) error { r.Header.Set("X-Signed", "1"); return nil }, func(n int) string { return fmt.Sprintf("sum-%d", n) }},
		"PrepareAttemptFunc setting the trailer": {func(r *http.Request, _ int) error { r.Trailer.Set("X-Checksum", "prepared"); return nil },
			func(int) string { return "prepared" }},
	}
	for mode, opts := range modes {
		for name, p := range prepares {
			for _, retry := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/retry=%v", mode, name, retry), func(t *testing.T) {
					mu.Lock()
					got = nil
					mu.Unlock()
					opts := append([]otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPut),
						otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, opts...)
					if p.f != nil {
						opts = append(opts, otelretry.WithPrepareAttempt(p.f))
					}
					req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Trailer = http.Header{"X-Checksum": nil} // declared; the body sets it
					bodies := 0
					req.GetBody = func() (io.ReadCloser, error) {
						bodies++
						return &trailerBody{r: strings.NewReader("payload"), trailer: req.Trailer, value: fmt.Sprintf("sum-%d", bodies)}, nil
					}
					req.Body, _ = req.GetBody()
					if retry {
						req.Header.Set("X-Fail-First", "1")
					}
					resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					var want []string
					for n := 1; n <= 1+btoi(retry); n++ {
						want = append(want, p.want(n))
					}
					mu.Lock()
					defer mu.Unlock()
					if !slices.Equal(got, want) {
						t.Errorf("the server received trailers %q, want %q", got, want)
					}
				})
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A PrepareAttemptFunc cannot change what made a write repeatable between
// attempts: under the idempotency-key contract, a key stamped afresh for
// each attempt (or stripped) would let a timed-out POST be resent under a
// key the server never saw, which it cannot deduplicate. The contract is
// judged on the prepared request of the first attempt; a later attempt
// whose PrepareAttemptFunc changes the contract headers, the method or the host
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

// The body a PrepareAttemptFunc gives a bodyless write is what is sent, with the
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
// signed in the PrepareAttemptFunc is never replaced by the caller's.
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
	keepDeadConnection(t, client, srv.URL, poison)
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

// A PrepareAttemptFunc that replaces the body: the body it replaced (the
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
// when the PrepareAttemptFunc signed its query: on the CLIENT span, in the log
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

// A deadline that passes while a PrepareAttemptFunc waits on its context is the
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

// A PrepareAttemptFunc that sets the attempt's Header to nil makes RoundTrip
// return, not panic: the attempt gets a header map of its own again, which
// the propagators write into.
func TestPrepareFuncSettingANilHeaderCausesNoPanic(t *testing.T) {
	srv := newRecordingServer(t, false)
	_, opts := tracingProviders()
	rt := otelretry.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), append(opts,
		otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error { r.Header = nil; return nil }))...)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	var resp *http.Response
	var err error
	panicked := func() (p any) {
		defer func() { p = recover() }()
		resp, err = rt.RoundTrip(req)
		return nil
	}()
	if resp != nil {
		resp.Body.Close()
	}
	if panicked != nil {
		t.Fatalf("RoundTrip panicked: %v (want an error, as net/http gives for a nil Header)", panicked)
	}
	t.Logf("err = %v", err)
}

// A PrepareAttemptFunc may not retarget the request: one that changes
// Request.Host (the Host header net/http sends, the virtual host the
// request goes to) ends the operation with reason prepare_failed.
func TestPrepareFuncChangingTheHostHeaderStopsTheOperation(t *testing.T) {
	srv := newRecordingServer(t, false)
	var hosts []string
	inner := http.DefaultTransport.(*http.Transport).Clone()
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		hosts = append(hosts, r.Host)
		return inner.RoundTrip(r)
	})
	rt := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		r.Host = "other-tenant.example"
		return nil
	}))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	var oe *otelretry.Error
	if err == nil || !errors.As(err, &oe) || oe.Reason != attrs.ReasonPrepareFailed {
		t.Errorf("err = %v; want stop/prepare_failed with no call, got Host headers sent %q", err, hosts)
	}
}

// The policy judges the request that goes on the wire, not only the
// caller's: a PrepareAttemptFunc that turns a GET into a POST (a method-override
// gateway) never gets that POST resent after a timeout as if it were a
// GET.
func TestPrepareFuncChangingTheMethodIsNeverResentAsIfSafe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.Method = http.MethodPost
				return nil
			}))
		h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/orders"))
		posts := 0
		for _, c := range h.base.Calls() {
			if c.Method == http.MethodPost {
				posts++
			}
		}
		if posts > 1 {
			t.Errorf("a POST that timed out was sent %d times: the policy judged the GET the caller made, not the POST on the wire", posts)
		}
	})
}

// The attempt timeout starts when the prepared attempt is sent: a
// PrepareAttemptFunc slower than the attempt timeout (50ms), far inside the
// operation deadline (5s), does not end the operation deadline_exceeded.
func TestPrepareFuncSlowerThanTheAttemptTimeoutIsNotTheDeadline(t *testing.T) {
	srv := newRecordingServer(t, false)
	rt := otelretry.NewTransport(http.DefaultTransport.(*http.Transport).Clone(),
		otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(5*time.Second),
		otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error { time.Sleep(120 * time.Millisecond); return nil }))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	start := time.Now()
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	var oe *otelretry.Error
	if errors.As(err, &oe) && oe.Outcome == attrs.OutcomeDeadlineExceeded {
		t.Errorf("after %v of a 5s deadline: %v; the deadline did not pass (server got %d requests)",
			time.Since(start).Round(10*time.Millisecond), err, len(srv.received()))
	}
}

// Time is checked again once the attempt is prepared: a PrepareAttemptFunc that
// outlasts the deadline (a slow token refresh) makes no call past it, and
// RoundTrip returns when the PrepareAttemptFunc does.
func TestSlowPrepareFuncNeverStartsACallPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var calledAt time.Duration
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calledAt = time.Since(start)
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := otelretry.NewTransport(base, otelretry.WithDeadline(time.Second),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				time.Sleep(1500 * time.Millisecond)
				return nil
			}))
		_, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		took := time.Since(start)
		if calledAt > time.Second {
			t.Errorf("the base was called %v after the start, past the 1s deadline", calledAt)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("RoundTrip took %v with a 1s deadline (err %v)", took, err)
		}
	})
}

// Time is checked again once the attempt has its body: a GetBody that
// outlasts the deadline (a body read again from disk) makes no call past
// it, and RoundTrip returns when GetBody does.
func TestSlowGetBodyNeverStartsACallPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var lastCall time.Duration
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}}, otelretry.WithDeadline(time.Second),
			otelretry.WithIdempotentMethods("PUT"), otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) {
			time.Sleep(1200 * time.Millisecond)
			return io.NopCloser(strings.NewReader("x")), nil
		}
		h.transprt.RoundTrip(req)
		took := time.Since(start)
		for _, c := range h.base.Calls() {
			lastCall = c.At.Sub(start)
		}
		if lastCall > time.Second {
			t.Errorf("an attempt was sent %v after the start, past the 1s deadline", lastCall)
		}
		if took > 1300*time.Millisecond {
			t.Errorf("RoundTrip took %v", took)
		}
	})
}

// A PrepareAttemptFunc that fails leaves no attempt span, with client spans or
// without: the operation's span and one per attempt made
// (retry.attempts) are all there is.
func TestFailedPreparationLeavesNoAttemptSpan(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		t.Run(fmt.Sprintf("clientSpans=%v", clientSpans), func(t *testing.T) {
			opts := []otelretry.Option{otelretry.WithPrepareAttempt(func(*http.Request, int) error { return errors.New("no token") })}
			if !clientSpans {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			h := newHarness(t, []scripted.Step{{Status: 200}}, opts...)
			h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			op := h.operation(t)
			if want := 1 + int(attrOf(op, attrs.AttemptsKey).AsInt64()); len(h.ended()) != want {
				t.Errorf("spans = %d, want %d (1 + retry.attempts):\n%s", len(h.ended()), want, dumpSpans(h.ended()))
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// 200 concurrent PUTs over loopback against a server answering 503 to
// every other request, with a PrepareAttemptFunc that replaces the body (with its
// own GetBody) on odd attempts: every body the caller or GetBody made is
// closed exactly once, each request carries the prepared bytes of its
// attempt, and no goroutine is left behind.
func TestConcurrentPreparedBodiesAreSentAndClosedOnce(t *testing.T) {
	var n atomic.Int64
	var wrong atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		want := "payload"
		if atoi(r.Header.Get("X-Attempt"))%2 == 1 {
			want = "prepared-" + r.Header.Get("X-Attempt")
		}
		if string(b) != want {
			wrong.Add(1)
		}
		if n.Add(1)%2 == 1 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	before := runtime.NumGoroutine()
	base := http.DefaultTransport.(*http.Transport).Clone()
	_, opts := tracingProviders()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithIdempotentMethods("PUT"), otelretry.WithMaxAttempts(4),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget(),
		otelretry.WithPrepareAttempt(func(r *http.Request, a int) error {
			r.Header.Set("X-Attempt", strconv.Itoa(a))
			if a%2 == 1 {
				p := "prepared-" + strconv.Itoa(a)
				r.Body, r.ContentLength = io.NopCloser(strings.NewReader(p)), int64(len(p))
				r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(p)), nil }
			}
			return nil
		}))...)
	bodies := &countedBodies{getBodyOK: -1}
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := bodies.request(t, context.Background(), http.MethodPut, true)
			req.URL = mustURL(t, srv.URL+"/things")
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	bodies.check(t)
	if w := wrong.Load(); w != 0 {
		t.Errorf("%d requests carried bytes other than their attempt's prepared body", w)
	}
	base.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+2 {
		t.Errorf("%d goroutines left, %d before", g, before)
	}
}

// requestSnapshot is everything of a request the transport could modify.
type requestSnapshot struct {
	method, url, host string
	user              *url.Userinfo
	header            http.Header
	headerPtr         uintptr
	body              io.ReadCloser
	getBody           uintptr
	contentLength     int64
	te                []string
	close             bool
	trailer           http.Header
	ctx               context.Context
	response          *http.Response
}

func (s requestSnapshot) diff(r *http.Request) string {
	now := snapshot(r)
	var d []string
	if now.method != s.method || now.url != s.url || now.host != s.host || now.user != s.user {
		d = append(d, fmt.Sprintf("method/url/host: %s %s %s -> %s %s %s", s.method, s.url, s.host, now.method, now.url, now.host))
	}
	if !reflect.DeepEqual(now.header, s.header) || now.headerPtr != s.headerPtr {
		d = append(d, fmt.Sprintf("header: %v -> %v", s.header, now.header))
	}
	if now.body != s.body || now.getBody != s.getBody || now.contentLength != s.contentLength {
		d = append(d, "body, GetBody or ContentLength")
	}
	if !reflect.DeepEqual(now.te, s.te) || now.close != s.close || !reflect.DeepEqual(now.trailer, s.trailer) {
		d = append(d, "transfer encoding, close or trailer")
	}
	if now.ctx != s.ctx || now.response != s.response {
		d = append(d, "context or response")
	}
	return strings.Join(d, "; ")
}

func snapshot(r *http.Request) requestSnapshot {
	s := requestSnapshot{method: r.Method, url: r.URL.String(), host: r.Host, user: r.URL.User, header: r.Header.Clone(),
		body: r.Body, contentLength: r.ContentLength, te: append([]string(nil), r.TransferEncoding...), close: r.Close,
		trailer: r.Trailer.Clone(), ctx: r.Context(), response: r.Response}
	if r.Header != nil {
		s.headerPtr = reflect.ValueOf(r.Header).Pointer()
	}
	if r.GetBody != nil {
		s.getBody = reflect.ValueOf(r.GetBody).Pointer()
	}
	return s
}

// The caller's request is never modified, on every path: client spans,
// WithoutClientSpans, the no-op fast path, a PrepareAttemptFunc, a guarded
// bodyless write, a request without header, retries, a state check.
func TestCallerRequestIsUntouchedOnEveryPath(t *testing.T) {
	paths := map[string][]otelretry.Option{
		"client spans":         nil,
		"without client spans": {otelretry.WithoutClientSpans()},
		"noop":                 {otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())},
		"prepare": {otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
			r.Header.Set("X-Attempt", fmt.Sprint(n))
			r.URL.RawQuery = "sig=x"
			return nil
		})},
		"state check": {otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			c.Request.Header.Set("X-Check", "1")
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		})},
	}
	reqs := map[string]func(t *testing.T, ctx context.Context) *http.Request{
		"GET": func(t *testing.T, ctx context.Context) *http.Request {
			r := get(t, ctx, "http://u:p@api.test/x?q=1")
			r.Header.Set("Authorization", "a")
			return r
		},
		"guarded bodyless POST": func(t *testing.T, ctx context.Context) *http.Request {
			r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/x", nil)
			r.Header.Set("Idempotency-Key", "k")
			return r
		},
		"POST with body": func(t *testing.T, ctx context.Context) *http.Request {
			return post(t, ctx, "http://api.test/x", "body")
		},
		"no header": func(t *testing.T, ctx context.Context) *http.Request {
			return (&http.Request{Method: http.MethodPut, URL: mustURL(t, "http://api.test/x")}).WithContext(ctx)
		},
	}
	for pname, popts := range paths {
		for rname, mk := range reqs {
			t.Run(pname+"/"+rname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rec := tracetest.NewSpanRecorder()
					opts := append([]otelretry.Option{otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
						otelretry.WithPropagators(propagation.TraceContext{}), otelretry.WithIdempotentMethods("PUT"),
						otelretry.WithAttemptTimeout(50 * time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, popts...)
					base := scripted.New(scripted.Step{Status: 503}, scripted.Step{Hang: true}, scripted.Step{Status: 200})
					tr := otelretry.NewTransport(base, opts...)
					req := mk(t, t.Context())
					before := snapshot(req)
					resp, _ := tr.RoundTrip(req)
					if resp != nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					if d := before.diff(req); d != "" {
						t.Errorf("the caller's request changed: %s", d)
					}
				})
			})
		}
	}
}

// A request built by hand with no header is legal for RoundTrip: the
// attempt copies get a header of their own (otelhttp and the propagators
// write into it) and the caller's request stays as it was.
func TestRequestWithoutHeader(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPropagators(propagation.TraceContext{}))
	req := &http.Request{Method: http.MethodGet, URL: mustURL(t, "http://api.test/")}
	resp, err := h.transprt.RoundTrip(req.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.Header != nil {
		t.Errorf("the caller's request got a header: %v", req.Header)
	}
	if got := h.base.Calls()[0].Header.Get("Traceparent"); got == "" {
		t.Errorf("the attempt carries no traceparent")
	}
}

// Each attempt sends a copy of the caller's request of its own: a
// Classifier that writes into Answer.Request (its header and its URL,
// which a hook must not do) changes neither the next attempt's header and
// URL nor the caller's request.
func TestHookWritingIntoAnAttemptsCopyReachesNeitherTheNextAttemptNorTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				a.Request.Header.Set("X-Hook", "mutated")
				a.Request.URL.Path = "/mutated"
				a.Request.URL.RawQuery = "hook=1"
				return otelretry.Classification{}
			}))
		req := get(t, t.Context(), "http://api.test/orig")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 {
			t.Fatalf("%d calls, want 2", len(calls))
		}
		if calls[1].Header.Get("X-Hook") != "" {
			t.Errorf("second attempt carried the header the classifier set on the first attempt's copy")
		}
		if calls[1].URL != "http://api.test/orig" {
			t.Errorf("second attempt went to %q, want http://api.test/orig: the classifier's write into the first attempt's copy reached it", calls[1].URL)
		}
		if req.URL.String() != "http://api.test/orig" {
			t.Errorf("the caller's request URL is now %q: RoundTrip modified req", req.URL)
		}
	})
}

// A base that returns early and keeps reading and closes the caller's body
// later, in its own goroutine (allowed by the RoundTripper contract): the
// retry takes a fresh body, and every body is closed exactly once.
func TestBaseClosingTheRequestBodyLateLeavesEveryBodyClosedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var wg sync.WaitGroup
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(50 * time.Millisecond)
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}()
			if calls.Add(1) == 1 {
				return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := otelretry.NewTransport(base, otelretry.WithIdempotentMethods("PUT"), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		bodies := &countedBodies{getBodyOK: -1}
		resp, err := tr.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		wg.Wait()
		bodies.check(t)
	})
}

// A base that waits on the request context only after the attempt timed
// out, and one whose caller cancels while it runs: the attempt's context
// is the standard library's, so Done, Err and cancellation agree in every
// order.
func TestBaseWaitingOnTheContextAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(5 * time.Millisecond) // past the 1ms attempt timeout
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := otelretry.NewTransport(late, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithAttemptTimeout(time.Millisecond), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		_, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		var e *otelretry.Error
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeMaxAttempts || e.Attempts != 2 {
			t.Fatalf("err = %v, want max_attempts after 2 timed-out attempts", err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Millisecond, cancel)
		tr = otelretry.NewTransport(late, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithAttemptTimeout(time.Hour), otelretry.WithoutBudget())
		_, err = tr.RoundTrip(get(t, ctx, "http://api.test/"))
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
	})
}

// A base that returns a response and an error: the response is closed and
// the attempt fails with the error, as http.Client treats it; one that
// returns neither: the attempt fails with an error saying so.
func TestMisbehavingBaseResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200, AlsoErr: errors.New("both at once")}, {NilResponse: true}},
			otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if resp != nil || err == nil {
			t.Fatalf("got %v, %v; want an error", resp, err)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Fatalf("the response returned with an error was left open")
		}
		if !strings.Contains(err.Error(), "nil *Response with a nil error") {
			t.Errorf("err = %v, want the (nil, nil) base named", err)
		}
		for _, e := range h.events(t) {
			if e.Status != 0 || e.ErrorClass != "other" {
				t.Errorf("attempt %d: status %d, class %q; want no status, class other", e.Attempt, e.Status, e.ErrorClass)
			}
		}
	})
}

// A base that breaks the RoundTripper contract with a nil response and a
// nil error gets an error, on either path, not a panic; a response with a
// nil body is returned as it is.
func TestBaseAnsweringNothing(t *testing.T) {
	paths := map[string][]otelretry.Option{
		"otelhttp": nil,
		"direct":   {otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())},
		"base":     {otelretry.WithoutClientSpans()},
	}
	for name, opts := range paths {
		t.Run(name, func(t *testing.T) {
			nilResp := otelretry.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil }),
				append(opts, otelretry.WithMaxAttempts(1))...)
			resp, err := nilResp.RoundTrip(get(t, t.Context(), "http://api.test/"))
			var rerr *otelretry.Error
			if resp != nil || !errors.As(err, &rerr) || rerr.Err == nil || !strings.Contains(err.Error(), "nil *Response") {
				t.Fatalf("got %v, %v; want an *Error about the nil response", resp, err)
			}
			nilBody := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 204, Header: http.Header{}, Request: r}, nil
			}), opts...)
			resp, err = nilBody.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if err != nil || resp.StatusCode != 204 {
				t.Fatalf("got %v, %v; want the 204", resp, err)
			}
			if resp.Body != nil {
				resp.Body.Close() // otelhttp supplies http.NoBody
			}
		})
	}
}

// A base's response with a nil Body and a positive ContentLength is a
// failed attempt, as http.Client and otelhttp treat it: the operation does
// not end return with an error, and no attempt span carries a status
// below 400 together with error.type.
func TestNilBodyWithAContentLengthIsAFailedAttempt(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: 10, Request: r}, nil
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if resp != nil {
		resp.Body.Close()
	}
	var e *otelretry.Error
	if errors.As(err, &e) && e.Outcome == attrs.OutcomeReturn {
		t.Errorf("RoundTrip returned an error with outcome %q: %v", e.Outcome, err)
	}
	for _, s := range spantest.Attempts(rec.Ended()) {
		_, status := spantest.Attr(s, attrs.HTTPResponseStatusCodeKey)
		et, hasET := spantest.Attr(s, attrs.ErrorTypeKey)
		if status && hasET && attrOf(s, attrs.HTTPResponseStatusCodeKey).AsInt64() < 400 {
			t.Errorf("attempt span has status %d and error.type %q", attrOf(s, attrs.HTTPResponseStatusCodeKey).AsInt64(), et.AsString())
		}
	}
	if t.Failed() {
		t.Logf("spans:\n%s", dumpSpans(rec.Ended()))
	}
}

// Garbage from a base or a hook does not reach the caller or the span as
// it is: a response with StatusCode 0 is never recorded as
// http.response.status_code=0, and a state check that answers applied with
// a response whose Body is nil hands the caller a response with a body.
func TestGarbageAnswersDoNotReachTheCallerAsTheyAre(t *testing.T) {
	t.Run("status 0", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 0, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if resp != nil {
				resp.Body.Close()
			}
			for _, s := range spantest.Attempts(rec.Ended()) {
				if v, ok := spantest.Attr(s, attrs.HTTPResponseStatusCodeKey); ok && v.AsInt64() == 0 {
					t.Errorf("attempt %d: http.response.status_code=0, decision %s, reason %s (err %v)", attrOf(s, attrs.AttemptKey).AsInt64(),
						attrOf(s, attrs.DecisionKey).AsString(), attrOf(s, attrs.ReasonKey).AsString(), err)
				}
			}
		})
	})
	t.Run("applied with a nil Body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(10*time.Millisecond),
				otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
					return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{}}}, nil
				}))
			resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/", "x"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Body == nil {
				t.Errorf("RoundTrip returned a response with a nil Body")
			} else {
				resp.Body.Close()
			}
		})
	})
}

// A retried response whose body stalls: draining it never outlives the
// pause the decision chose, so the next attempt starts on time and the
// operation keeps its deadline.
func TestStalledRetriedBodyKeepsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503, Body: "abc", Stall: true}},
			otelretry.WithDeadline(time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(900*time.Millisecond)),
			otelretry.WithoutBudget())
		start := time.Now()
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v, %v; want the last 503", resp, err)
		}
		if took := time.Since(start); took != 900*time.Millisecond {
			t.Errorf("RoundTrip returned after %v, want 900ms (the pause, then a 503 with no time left)", took)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 || calls[1].At.Sub(start) != 900*time.Millisecond {
			t.Fatalf("calls = %d (second at %v), want 2, the second at +900ms", len(calls), calls[len(calls)-1].At.Sub(start))
		}
		ev := h.events(t)
		if ev[0].Decision != "retry" || ev[1].Decision != "deadline_exceeded" {
			t.Errorf("decisions = %s, %s; want retry, deadline_exceeded", ev[0].Decision, ev[1].Decision)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Errorf("%d response bodies left open", n)
		}
	})
}

// The drain of a discarded body ends when its bound passes, also for a
// body that ignores the attempt's context (an in-memory pipe, a custom
// RoundTripper): it is closed, and RoundTrip keeps its 1s deadline.
func TestDrainOfABodyThatIgnoresItsContextEndsByTheDeadline(t *testing.T) {
	var writers []*io.PipeWriter
	var mu sync.Mutex
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) > 1 {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		pr, pw := io.Pipe()
		mu.Lock()
		writers = append(writers, pw)
		mu.Unlock()
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithDeadline(time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		resp, err := tr.RoundTrip(get(t, context.Background(), "http://api.test/"))
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-done:
		if took := time.Since(start); took > 1100*time.Millisecond {
			t.Errorf("RoundTrip took %v with a 1s deadline", took)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("RoundTrip still blocked after 3s with a 1s deadline: the drain waits on a body that ignores the context")
		mu.Lock()
		for _, w := range writers {
			w.Close() // let it go, so the test leaks nothing
		}
		mu.Unlock()
		<-done
	}
}

// slowRetryRecord is a slog handler whose record of a retry (WARN) takes
// 150 ms to write, as a handler writing to a slow sink does.
type slowRetryRecord struct{ slog.Handler }

func (slowRetryRecord) Enabled(context.Context, slog.Level) bool { return true }

func (slowRetryRecord) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		time.Sleep(150 * time.Millisecond)
	}
	return nil
}

// The drain of a discarded body ends within the pause, counted from the
// answer as the pause is, whatever the telemetry recorded before it took:
// a retry record that took 150 ms of a 200 ms pause leaves the stalled
// drain 50 ms, and the retry planned at 200 ms gets its 200 within the
// 300 ms deadline. Before, the drain's bound was counted from its start,
// so it ended at 350 ms, past the deadline (deadline_exceeded, overrun).
func TestTheDrainEndsWithinThePauseCountedFromTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503, Body: "busy", Stall: true}, {Status: 200}},
			otelretry.WithDeadline(300*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(200*time.Millisecond)),
			otelretry.WithLogger(slog.New(slowRetryRecord{slog.DiscardHandler})))
		start := time.Now()
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatalf("err = %v after %v, want the 200 of the retry planned at 200ms", err, time.Since(start))
		}
		resp.Body.Close()
		if took := time.Since(start); took != 200*time.Millisecond || resp.StatusCode != http.StatusOK {
			t.Errorf("status %d after %v, want the retry's 200 at 200ms", resp.StatusCode, took)
		}
	})
}

// A discarded 503 whose body breaks while it is drained (the server closes
// the connection mid-body) keeps error.type "503" on its attempt span:
// the transport owns that read, and otelhttp's record of the read error
// does not replace the answer's.
func TestBodyThatBreaksWhileDrainedKeepsTheAttemptsErrorType(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			buf.WriteString("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n0123456789")
			buf.Flush()
			conn.Close()
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithBackoff(otelretry.ConstantBackoff(50*time.Millisecond)))
	resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) != 2 {
		t.Fatalf("attempts = %d, want 2", len(attempts))
	}
	if got := attrOf(attempts[0], attrs.ErrorTypeKey).AsString(); got != "503" {
		t.Errorf("first attempt: error.type = %q, want \"503\"\n%s", got, dumpSpans(attempts[:1]))
	}
}

// A body whose Close panics where otelretry closes it before any send took
// it: the caller's unbuffered body that a PrepareAttemptFunc refuses or
// replaces, and the copy GetBody made for a retry the PrepareAttemptFunc
// refuses. Each is closed once; the cleanup after the panic closed them
// again (the buffered body's fix, below in bodybuffer_test.go, had not
// reached these paths).
func TestABodysClosePanicBeforeItsSendClosesItOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	for name, prepare := range map[string]otelretry.PrepareAttemptFunc{
		"refused": func(*http.Request, int) error { return errors.New("refused") },
		"replaced": func(r *http.Request, _ int) error {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("signed")), 6
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			rt := otelretry.NewTransport(http.DefaultTransport, otelretry.WithPrepareAttempt(prepare))
			body := &closePanicsBody{r: strings.NewReader("hello")}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = -1 // not buffered: the body stays the caller's
			if p := roundTripRecovered(rt, req); p == nil {
				t.Error("the Close's panic did not reach the caller")
			}
			if n := body.closes.Load(); n != 1 {
				t.Errorf("the caller's body was closed %d times, want once", n)
			}
		})
	}
	t.Run("a retry's copy refused", func(t *testing.T) {
		rt := otelretry.NewTransport(http.DefaultTransport,
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithPrepareAttempt(func(_ *http.Request, n int) error {
				if n == 2 {
					return errors.New("refused")
				}
				return nil
			}))
		again := &closePanicsBody{r: strings.NewReader("hello")}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		req.GetBody = func() (io.ReadCloser, error) { return again, nil }
		if p := roundTripRecovered(rt, req); p == nil {
			t.Error("the Close's panic did not reach the caller")
		}
		if n := again.closes.Load(); n != 1 {
			t.Errorf("GetBody's copy was closed %d times, want once", n)
		}
	})
}
