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
	"net/http/httptrace"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// reviewRawServer is a loopback HTTP/1.1 server that reads each request
// whole, counts it, and answers with the raw bytes of reply(n), n counting
// from 1, then closes the connection.
func reviewRawServer(t *testing.T, reply func(n int64) string) (*httptest.Server, *atomic.Int64) {
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

// Claim 3 and 6 attacked: "no write whose outcome is unknown is ever resent
// except with protocol proof". h2Unprocessed reads the HTTP/2 proof from
// the error's text anywhere in the message, over any protocol. An HTTP/1
// server (or anything whose text ends up in a net/http error) that
// processed a POST and answers with a malformed header line quoting
// net/http's HTTP/2 message makes otelretry "prove" the write unprocessed
// and resend it: the server processes the write twice.
func TestReviewHTTP1ServerTextForgesH2Evidence(t *testing.T) {
	for name, cause := range map[string]string{
		"goaway":         "http2: Transport received Server's graceful shutdown GOAWAY",
		"refused stream": "stream error: stream ID 1; REFUSED_STREAM",
	} {
		t.Run(name, func(t *testing.T) {
			srv, posts := reviewRawServer(t, func(int64) string {
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

// reviewProviders returns recording trace providers with the W3C
// propagator, so that otelhttp injects a traceparent into each attempt.
func reviewProviders() (*tracetest.SpanRecorder, []otelretry.Option) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return rec, []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithPropagators(propagation.TraceContext{})}
}

// Claim 3 attacked: "no panics from configuration" / hooks that return
// nil. A PrepareFunc that sets the attempt's Header to nil (net/http itself
// answers such a request with the error "http: nil Request.Header") makes
// the propagator write into a nil map: RoundTrip panics instead of
// returning an error.
func TestReviewPrepareNilHeaderPanics(t *testing.T) {
	srv := newRecordingServer(t, false)
	_, opts := reviewProviders()
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

// Claim 1 attacked: a PrepareFunc "may not change the host". It can change
// Request.Host, the Host header net/http sends (the virtual host the
// request goes to), and the attempt is sent; the check compares only
// URL.Host.
func TestReviewPrepareChangesHostHeader(t *testing.T) {
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

// Claim 4/5 attacked: the preparation counts against the attempt, and
// "no time is left after the preparation" ends deadline_exceeded. A
// PrepareFunc slower than the attempt timeout (50ms) but far inside the
// operation deadline (5s) ends the operation deadline_exceeded, reason
// deadline (or overrun after a retry), with no call made, while almost
// all of the deadline is left: the recorded reason is not what happened,
// and the error matches context.DeadlineExceeded.
func TestReviewSlowPrepareIsNotTheDeadline(t *testing.T) {
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

// Claim 3 attacked: "every request body is closed exactly once". A
// PrepareFunc that panics on the first attempt: the attempt holds the
// caller's body (abandon closes it) while the operation still counts it
// as the caller's, not yet handed to an attempt (abandonOnPanic closes it
// again).
func TestReviewPreparePanicOnFirstAttemptClosesCallerBodyOnce(t *testing.T) {
	for _, replaceFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "body kept", true: "body replaced, then panic"}[replaceFirst], func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if replaceFirst {
					r.Body = io.NopCloser(strings.NewReader("signed payload"))
				}
				panic("prepare bug")
			}))
			bodies := &countedBodies{getBodyOK: -1}
			func() {
				defer func() { recover() }()
				h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
			}()
			bodies.check(t)
		})
	}
}

// slowBody delivers n chunks of 1 KiB, sleeping d before each.
type slowBody struct {
	n int
	d time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.d)
	b.n--
	return copy(p, bytes.Repeat([]byte("u"), min(len(p), 1024))), nil
}

// Claim 4 (guard, passes): the attempt timeout bounds the wait for the
// headers, not the upload between. A 60ms attempt timeout and a ~180ms
// upload of a PUT succeed in one request; a server that then takes 300ms
// to answer is cut by the attempt timeout after the upload, on each of
// the two attempts.
func TestReviewAttemptTimeoutSparesUpload(t *testing.T) {
	var answerDelay atomic.Int64
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		requests.Add(1)
		select {
		case <-time.After(time.Duration(answerDelay.Load())):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, otelretry.WithAttemptTimeout(60*time.Millisecond),
		otelretry.WithDeadline(3*time.Second), otelretry.WithMaxAttempts(2), otelretry.WithIdempotentMethods("PUT"),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	put := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL, nil)
		req.Body = io.NopCloser(&slowBody{n: 6, d: 30 * time.Millisecond})
		req.ContentLength = 6 * 1024
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(&slowBody{n: 6, d: 30 * time.Millisecond}), nil }
		return rt.RoundTrip(req)
	}
	resp, err := put()
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	resp.Body.Close()
	if n := requests.Load(); n != 1 {
		t.Errorf("slow upload took %d requests, want 1", n)
	}
	answerDelay.Store(int64(300 * time.Millisecond))
	start := time.Now()
	_, err = put()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 1200*time.Millisecond {
		t.Errorf("after %v: err = %v; want the attempt timeout after each upload", time.Since(start), err)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("server got %d requests, want 1 + 2", n)
	}
}

// Claim 4 (guard, passes, run under -race): httptrace hooks a base calls
// late (after RoundTrip returned), twice and concurrently, change nothing:
// the response body handed to the caller, which watches the attempt's
// context, reads to the end well past the attempt timeout.
func TestReviewLateHooksChangeNothing(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		tr := httptrace.ContextClientTrace(r.Context())
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		ctx := r.Context()
		for range 2 {
			go func() {
				time.Sleep(time.Millisecond)
				if tr != nil {
					if tr.GotConn != nil {
						tr.GotConn(httptrace.GotConnInfo{})
					}
					if tr.WroteHeaders != nil {
						tr.WroteHeaders()
					}
					if tr.WroteRequest != nil {
						tr.WroteRequest(httptrace.WroteRequestInfo{})
					}
				}
			}()
		}
		body := io.NopCloser(readerFunc(func(p []byte) (int, error) {
			select {
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			case <-time.After(80 * time.Millisecond):
			}
			return 0, io.EOF
		}))
		return &http.Response{StatusCode: 200, Body: body, Header: http.Header{}, Request: r}, nil
	})
	rec, opts := reviewProviders()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithAttemptTimeout(20*time.Millisecond))...)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x", strings.NewReader("b"))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Errorf("body read after late hooks: %v", err)
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	_ = rec
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// Claims 1 and 3 (guard, passes, run under -race): 200 concurrent PUTs
// over loopback against a server answering 503 to every other request,
// with a PrepareFunc that replaces the body (with its own GetBody) on odd
// attempts: every body the caller or GetBody made is closed exactly once,
// each server request carries the prepared bytes of its attempt, and no
// goroutine is left behind.
func TestReviewConcurrentOperationsBodiesAndGoroutines(t *testing.T) {
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
	_, opts := reviewProviders()
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

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// Claim 1 (guard, passes): spans, logs and errors record the prepared
// request sanitized. A PrepareFunc that adds userinfo and a query token
// (a presigned URL) and an Authorization header: the secrets reach the
// server, and no span (at start or end), log record or error.
func TestReviewPreparedSecretsNeverReachTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503}, {Err: errors.New(`dial: Get "http://bob:PREP-PASS@api.test/v1?token=PREP-TOKEN": refused`)}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithMaxAttempts(2),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.URL.User = url.UserPassword("bob", "PREP-PASS")
				r.URL.RawQuery = "token=PREP-TOKEN"
				r.Header.Set("Authorization", "Bearer PREP-AUTH")
				return nil
			}))
		atStart := &startAttributes{}
		h.tp.RegisterSpanProcessor(atStart)
		_, err := h.client.Do(get(t, t.Context(), "http://api.test/v1"))
		if err == nil {
			t.Fatal("want an error")
		}
		var dump strings.Builder
		for _, s := range h.ended() {
			fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events())
		}
		fmt.Fprintf(&dump, "%v\n%s\n%s", atStart.seen(), logs.String(), err.Error())
		for _, s := range []string{"PREP-PASS", "PREP-TOKEN", "PREP-AUTH"} {
			if strings.Contains(dump.String(), s) {
				t.Errorf("telemetry or error contains %q", s)
			}
		}
		if c := h.base.Calls(); len(c) == 0 || !strings.Contains(c[0].URL, "PREP-TOKEN") {
			t.Errorf("the server did not get the prepared URL: %v", c)
		}
	})
}

// abandoned returns the operation span's attempt_abandoned events as
// "decision/reason" strings.
func abandoned(t *testing.T, h *harness) []string {
	t.Helper()
	var out []string
	for _, e := range h.operation(t).Events() {
		if e.Name == attrs.EventAttemptAbandoned {
			d, _ := attrValue(e.Attributes, attrs.DecisionKey)
			r, _ := attrValue(e.Attributes, attrs.ReasonKey)
			out = append(out, d+"/"+r)
		}
	}
	return out
}

// Claim 5 (guard, passes): a retry that is not made leaves an
// attempt_abandoned event naming why: the caller canceled during the
// pause (canceled/caller); GetBody failed for the retry
// (stop/not_replayable); the next PrepareFunc set the URL to nil
// (stop/prepare_failed, no panic, no call). Every body is closed once.
func TestReviewAbandonedRetriesAreExplained(t *testing.T) {
	cases := map[string]struct {
		getBodyOK int
		prepare   otelretry.PrepareFunc
		cancelIn  time.Duration
		want      string
	}{
		"cancel in the pause": {getBodyOK: -1, cancelIn: 50 * time.Millisecond, want: "canceled/caller"},
		"GetBody fails":       {getBodyOK: 0, want: "stop/not_replayable"},
		"URL set to nil": {getBodyOK: -1, want: "stop/prepare_failed", prepare: func(r *http.Request, n int) error {
			if n > 1 {
				r.URL = nil
			}
			return nil
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithIdempotentMethods("PUT"),
					otelretry.WithBackoff(otelretry.ConstantBackoff(200 * time.Millisecond))}
				if tc.prepare != nil {
					opts = append(opts, otelretry.WithPrepareAttempt(tc.prepare))
				}
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelIn > 0 {
					time.AfterFunc(tc.cancelIn, cancel)
				}
				bodies := &countedBodies{getBodyOK: tc.getBodyOK}
				resp, err := h.transprt.RoundTrip(bodies.request(t, ctx, http.MethodPut, true))
				if resp != nil {
					resp.Body.Close()
				}
				if got := abandoned(t, h); len(got) != 1 || got[0] != tc.want {
					t.Errorf("attempt_abandoned = %v, want [%s] (err %v)", got, tc.want, err)
				}
				if n := len(h.base.Calls()); n != 1 {
					t.Errorf("%d calls, want 1", n)
				}
				bodies.check(t)
			})
		})
	}
}

// Claim 6 (guard, passes): over net/http's prior-knowledge h2c transport,
// a guarded POST with a body refused twice (REFUSED_STREAM, then a GOAWAY
// below its stream) is resent by otelretry with the evidence each time
// and processed exactly once; the resends are otelretry's attempts, each
// with one write on the wire.
func TestReviewH2RefusedTwiceProcessedOnce(t *testing.T) {
	srv := newH2Server(t, h2Refuse, h2GoAway, h2OK)
	base := h2cTransport()
	defer base.CloseIdleConnections()
	rec, opts := reviewProviders()
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
