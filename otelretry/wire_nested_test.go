// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
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

// TestNestedCallsNetworkEventsAreItsOwn: a call made inside an attempt
// through the same Transport (a layer below fetching a token with its
// request's context) is an operation of its own, and so are its network
// events: they never reach the outer attempt's wire. Here the token
// call's dial is refused (GetConn and no GotConn), then the write goes
// through a base that reports nothing through httptrace, applies it and
// loses its answer: heard by the outer wire, the refused dial would prove
// the write never left, and it would be resent. With a trace the layer
// added over the attempt's context, which httptrace composed with the
// attempt's hooks, the layer's hooks still hear the token call and the
// outer wire proves nothing.
func TestNestedCallsNetworkEventsAreItsOwn(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused from now on

	for _, c := range []struct {
		name                  string
		layerTrace, plainCall bool
	}{
		{name: "the request's context"},
		{name: "a trace of the layer's own over it", layerTrace: true},
		// httptrace reports a plain client's call to the attempt's hooks
		// too: the write's failure, a read from a connection, contradicts
		// the "never got a connection" they heard.
		{name: "through a plain client", plainCall: true},
	} {
		layerTrace := c.layerTrace
		t.Run(c.name, func(t *testing.T) {
			dialer := &http.Transport{}
			defer dialer.CloseIdleConnections()
			var client *http.Client
			var applied, layerHeard atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/token" {
					return dialer.RoundTrip(r)
				}
				ctx := r.Context()
				if layerTrace {
					ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(string) { layerHeard.Add(1) }})
				}
				token := get(t, otelretry.WithIntent(ctx, otelretry.Intent{NoRetry: true}), deadURL+"/token")
				do := client.Do
				if c.plainCall {
					do = (&http.Client{Transport: dialer}).Do
				}
				if resp, err := do(token); err == nil {
					resp.Body.Close()
					t.Error("the token call reached a closed server")
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				applied.Add(1)             // the server applied the write...
				return nil, errBaseTimeout // ...and its answer was lost
			})
			client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithoutBudget(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
			var results otelretry.Results
			ctx := otelretry.WithResults(t.Context(), &results)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				t.Fatal("the write's lost answer came back as a response")
			}
			if n := applied.Load(); n != 1 {
				t.Errorf("the write was applied %d times; a write whose answer was lost is never resent blindly", n)
			}
			if r, ok := results.Last(); !ok || r.Outcome != attrs.OutcomeCheckState || !r.OutcomeUnknown {
				t.Errorf("results = %+v, want the write's outcome unknown (check_state)", r)
			}
			if layerTrace && layerHeard.Load() == 0 {
				t.Error("the layer's own ClientTrace did not hear its token call")
			}
		})
	}
}

// TestNestedCallsWritesAreNotTheOuterAttempts: the calls a Classifier and
// a layer below make through the same Transport, with the context they
// were given, are never counted as the outer attempt's writes, nor
// recorded as resends below it.
func TestNestedCallsWritesAreNotTheOuterAttempts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	for _, hook := range []string{"classifier", "base below"} {
		t.Run(hook, func(t *testing.T) {
			netBase := srv.Client().Transport.(*http.Transport).Clone()
			defer netBase.CloseIdleConnections()
			rec := tracetest.NewSpanRecorder()
			var client *http.Client
			side := func(ctx context.Context) {
				for range 2 {
					resp, err := client.Do(get(t, otelretry.WithOperationID(ctx, "side"), srv.URL+"/side"))
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			opts := []otelretry.Option{otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), otelretry.WithoutBudget()}
			var base http.RoundTripper = netBase
			switch hook {
			case "classifier":
				opts = append(opts, otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
					if a.Request.URL.Path == "/items" {
						side(a.Request.Context())
					}
					return otelretry.Classification{}
				}))
			case "base below":
				base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/items" {
						side(r.Context())
					}
					return netBase.RoundTrip(r)
				})
			}
			client = &http.Client{Transport: otelretry.NewTransport(base, opts...)}
			resp, err := client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-outer"), srv.URL+"/items"))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			outer := 0
			for _, s := range spantest.Attempts(rec.Ended()) {
				if attrOf(s, attrs.OperationIDKey).AsString() != "op-outer" {
					continue
				}
				outer++
				if w := attrOf(s, attrs.WireWritesKey).AsInt64(); w != 1 || len(s.Events()) != 0 {
					t.Errorf("the outer attempt records %d writes and %d events, want its one write and none", w, len(s.Events()))
				}
			}
			if outer != 1 {
				t.Errorf("%d attempts of the outer operation, want 1", outer)
			}
		})
	}
}

// TestAnOverheardAttemptsUploadIsBoundedByTheDeadline: after a layer below
// made a call through the same Transport with a trace of its own over the
// attempt's context, the attempt's wire gathers no evidence, and the
// call's phases, which its hooks hear, no longer move its timer: the
// attempt is bounded by the deadline alone. An upload that makes progress
// (400 ms, against a 150 ms attempt timeout) is never cut, whether the
// call came before it (a token fetch, answered or refused its connection)
// or while it ran. Before, the refused call's GetConn, or the concurrent
// call's WroteRequest, re-armed the attempt timeout in the middle of the
// upload.
func TestAnOverheardAttemptsUploadIsBoundedByTheDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close()
	netBase := srv.Client().Transport.(*http.Transport).Clone()
	defer netBase.CloseIdleConnections()
	drip := func() io.Reader { return &slowBody{n: 10, d: 40 * time.Millisecond} }
	for _, tc := range []struct {
		name string
		// tokenURL is the call's; concurrent: it runs while the upload
		// does; quiet: the base that uploads reports nothing through
		// httptrace (a guarded POST, no GetBody), instead of net/http (a
		// Repeatable PUT).
		tokenURL          string
		concurrent, quiet bool
	}{
		{name: "a call before the upload", tokenURL: srv.URL + "/token"},
		{name: "a call while the upload runs", tokenURL: srv.URL + "/token", concurrent: true},
		{name: "a refused call before a quiet base's upload", tokenURL: refused.URL + "/token", quiet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var client *http.Client
			var calls sync.WaitGroup
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/token" {
					return netBase.RoundTrip(r)
				}
				ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GetConn: func(string) {}})
				call := func() {
					if resp, err := client.Do(get(t, otelretry.WithIntent(ctx, otelretry.Intent{NoRetry: true}), tc.tokenURL)); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
				if tc.concurrent {
					calls.Go(func() { time.Sleep(60 * time.Millisecond); call() })
				} else {
					call()
				}
				if tc.quiet {
					return readAllThenOK(r)
				}
				return netBase.RoundTrip(r)
			})
			client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithoutBudget(),
				otelretry.WithAttemptTimeout(150*time.Millisecond), otelretry.WithDeadline(5*time.Second),
				otelretry.WithMaxAttempts(2))}
			var req *http.Request
			if tc.quiet {
				req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, "http://orders.test/uploads", io.NopCloser(drip()))
				req.ContentLength = -1
			} else {
				ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
				req, _ = http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/items/1", drip())
				req.ContentLength = 10 * 1024
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(drip()), nil }
			}
			resp, err := client.Do(req)
			calls.Wait()
			if err != nil {
				t.Fatalf("an upload making progress was cut: %v", err)
			}
			resp.Body.Close()
		})
	}
}

// A side call a layer below makes through a plain client with the
// request's context while a repeatable PUT uploads (320 ms, against a
// 100 ms attempt timeout) asks for a connection, which the attempt's hooks
// hear, and its dial hangs: the upload is not cut, since the base showed
// no resend of its own (no failed write, no fresh body asked for). A fix
// that read any GetConn after the headers as the base's resend cut it,
// and each retry after it.
func TestASideCallsConnectionDoesNotCutAnUploadInProgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	side := hangingSideClient(t)
	netBase := srv.Client().Transport.(*http.Transport).Clone()
	defer netBase.CloseIdleConnections()
	var attempts atomic.Int32
	layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select { // once the upload began
			case <-time.After(60 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			sideReq, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://side.test/metric", nil)
			if resp, err := side.Do(sideReq); err == nil {
				resp.Body.Close()
			}
		}()
		return netBase.RoundTrip(r)
	})
	tr := otelretry.NewTransport(layer, otelretry.WithAttemptTimeout(100*time.Millisecond),
		otelretry.WithDeadline(3*time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
	drip := func() io.Reader { return &slowBody{n: 8, d: 40 * time.Millisecond} }
	req, _ := http.NewRequestWithContext(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}),
		http.MethodPut, srv.URL+"/obj", drip())
	req.ContentLength = 8 * 1024
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(drip()), nil }
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("an upload making progress was cut after %d attempts: %v", attempts.Load(), err)
	}
	resp.Body.Close()
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

// readAllThenOK is a base that reports nothing through httptrace: it reads
// the request's body to its end, stopping when the request's context ends,
// and answers 200.
func readAllThenOK(r *http.Request) (*http.Response, error) {
	defer r.Body.Close()
	buf := make([]byte, 1024)
	for {
		if r.Context().Err() != nil {
			return nil, context.Cause(r.Context())
		}
		if _, err := r.Body.Read(buf); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// TestASideCallAfterNetHTTPsOwnResendDoesNotCutItsUpload is
// TestASideCallsConnectionDoesNotCutAnUploadInProgress after a resend of
// net/http's own: the repeatable PUT goes first to a keep-alive connection
// that turned out dead, net/http resends it on a new connection (whose
// GetConn gets the attempt timeout afresh), and that resend's upload
// (8 x 40 ms, against a 100 ms attempt timeout) is in progress when a side
// call with the request's context asks for a connection: the upload is
// not cut. The resend's signal is taken by the one connection it asks
// for; kept, it made the side call's re-arm the timeout mid-upload.
func TestASideCallAfterNetHTTPsOwnResendDoesNotCutItsUpload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base, poison := poisonableTransport(t)

	side := hangingSideClient(t)

	var attempts, getBodies atomic.Int32
	var attemptCtx atomic.Pointer[context.Context]
	layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		ctx := r.Context()
		attemptCtx.Store(&ctx)
		return base.RoundTrip(r)
	})
	drip := func() io.Reader { return &slowBody{n: 8, d: 40 * time.Millisecond} }
	sideCall := func() {
		time.Sleep(60 * time.Millisecond) // the resend's headers are out, its upload in progress
		ctx := *attemptCtx.Load()
		sideReq, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://side.test/metric", nil)
		if resp, err := side.Do(sideReq); err == nil {
			resp.Body.Close()
		}
	}

	tr := otelretry.NewTransport(layer, otelretry.WithAttemptTimeout(100*time.Millisecond),
		otelretry.WithDeadline(5*time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
	client := &http.Client{Transport: tr}
	keepDeadConnection(t, client, srv.URL, poison) // the idle connection is dead
	attempts.Store(0)

	req, _ := http.NewRequestWithContext(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}),
		http.MethodPut, srv.URL+"/obj", drip())
	req.ContentLength = 8 * 1024
	req.GetBody = func() (io.ReadCloser, error) {
		if getBodies.Add(1) == 1 { // net/http's own resend of the first attempt
			go sideCall()
		}
		return io.NopCloser(drip()), nil
	}
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("after %v and %d attempts: %v", time.Since(start), attempts.Load(), err)
	}
	resp.Body.Close()
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d attempts after %v (GetBody called %d times), want 1: the resend's upload was cut by the side call's GetConn",
			n, time.Since(start), getBodies.Load())
	}
}

// hangingSideClient is a plain client, as a layer below makes its side
// calls with, whose every dial hangs until its context ends (net/http lets
// a dial go on after its call ended) or the test does, whose end waits
// for the dials to return, before the leak check.
func hangingSideClient(t *testing.T) *http.Client {
	release := make(chan struct{})
	var dialing atomic.Int32
	t.Cleanup(func() {
		close(release)
		for end := time.Now().Add(time.Second); dialing.Load() > 0 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	})
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		dialing.Add(1)
		defer dialing.Add(-1)
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, errors.New("side dial refused")
	}}}
}
