// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
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

// The caller's request is never modified, on every path: client spans,
// WithoutClientSpans, the no-op fast path, a PrepareFunc, a guarded
// bodyless write, a request without header, retries, a state check.
func TestAttackCallerRequestUntouchedOnEveryPath(t *testing.T) {
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

// A PrepareFunc may rewrite the attempt's copy. The policy (safe method,
// budget key) is still computed from the caller's request: a prepare that
// turns a GET into a POST (a method-override gateway) gets the POST
// resent blindly after timeouts, as if it were a GET.
func TestAttackPrepareChangingTheMethodIsResentAsIfSafe(t *testing.T) {
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

// A redirect chain with retries and slow hops, on virtual time: attempt
// numbers and request ids keep counting, every hop shares the id, and no
// hop runs past the deadline taken from the first hop.
func TestAttackRedirectChainWithRetriesAndSlowHops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[string]int{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			seen[r.URL.Path]++
			n := seen[r.URL.Path]
			mu.Unlock()
			timer := time.NewTimer(120 * time.Millisecond) // every answer takes 120ms
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			resp := &http.Response{Header: http.Header{}, Body: http.NoBody, Request: r}
			switch {
			case n == 1 && r.URL.Path == "/a":
				resp.StatusCode = 503
			case r.URL.Path == "/a":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/b"}
			case r.URL.Path == "/b":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/c"}
			case r.URL.Path == "/c":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/d"}
			default:
				resp.StatusCode = 200
			}
			return resp, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
			otelretry.WithDeadline(400*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
		start := time.Now()
		ctx := otelretry.WithOperationID(t.Context(), "op-r")
		resp, err := client.Do(get(t, ctx, "http://api.test/a"))
		if resp != nil {
			resp.Body.Close()
		}
		took := time.Since(start)
		if took > 400*time.Millisecond {
			t.Errorf("the chain took %v under a 400ms deadline", took)
		}
		if err == nil {
			t.Errorf("a 5-call chain of 120ms calls cannot finish in 400ms, yet err is nil")
		}
		var ids []string
		for _, s := range spantest.Attempts(rec.Ended()) {
			ids = append(ids, attrOf(s, attrs.RequestIDKey).AsString())
		}
		for i, id := range ids {
			if want := fmt.Sprintf("op-r/attempt-%d", i+1); id != want {
				t.Errorf("request ids = %v; want consecutive", ids)
				break
			}
		}
	})
}

// Many operations with the same WithOperationID context at once: the
// repeat counter and the shared id under -race.
func TestAttackSharedOperationContextConcurrently(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}})
	ctx := otelretry.WithOperationID(context.Background(), "op-shared")
	var wg sync.WaitGroup
	var fails atomic.Int32
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/"))
			if err != nil {
				fails.Add(1)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, op := range spantest.Operations(h.ended()) {
		v, ok := spantest.Attr(op, attrs.RepeatKey)
		n := int64(0)
		if ok {
			n = v.AsInt64()
		}
		if seen[n] {
			t.Errorf("retry.operation.repeat=%d twice", n)
		}
		seen[n] = true
	}
	if len(seen) != 200 || fails.Load() != 0 {
		t.Errorf("%d distinct repeat counts, %d failures", len(seen), fails.Load())
	}
}

// HTTP/1 keep-alive connection that dies after the request was written:
// a bodyless POST without a key, a DELETE with X-Idempotency-Key (guarded
// by the empty-body shield), a PUT with a body and Idempotency-Key. The
// server must see each write once, and the outcome be unknown.
func TestAttackKeepAliveDeathForOtherWrites(t *testing.T) {
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

// WithoutClientSpans: a PrepareFunc that fails leaves a stray INTERNAL
// attempt span with no attempt event (no retry.attempt, no decision),
// which the client-span mode does not create: span counts then disagree
// with retry.attempts (1 + n).
func TestAttackPrepareFailureLeavesAStrayAttemptSpan(t *testing.T) {
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

// One *http.Request shared by many concurrent RoundTrips (common for
// bodyless GETs): no race, every operation answers.
func TestAttackSharedRequestConcurrently(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		opts := []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(0))}
		if !clientSpans {
			opts = append(opts, otelretry.WithoutClientSpans())
		}
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
		req := get(t, context.Background(), "http://u:p@api.test/x?token=t")
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := h.transprt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
	}
}
