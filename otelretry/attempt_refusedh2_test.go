// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// An HTTP/2 connection net/http dialed for a request that gave up before
// it was ready is pooled as one whose GetConn was already reported: the
// next request that takes it from the pool, ahead of net/http's own
// checks, reports no GetConn. A keyed write whose method is no token is
// then sent to the host (net/http's HTTP/2 transport does not check the
// method): when its stream is reset, it is a keyed write whose answer was
// lost, resent, not a refusal (it ended stop, invalid_request, neither
// retried nor charged, though the host received it: a reviewer's find).
// The connection taken and the headers written tell it apart.
func TestAnHTTP2ConnectionPooledWithoutGetConnIsNoRefusal(t *testing.T) {
	var badSeen atomic.Int32
	handshake, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && badSeen.Add(1) == 1 {
			panic(http.ErrAbortHandler) // RST_STREAM: the host received it
		}
		w.WriteHeader(http.StatusOK)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		select {
		case handshake <- struct{}{}:
		default:
		}
		<-release
		return nil, nil
	}}
	srv.StartTLS()
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()

	// A request (another client of the same Transport) gives up while its
	// connection is dialed; the dial goes on and pools the connection.
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		_, err := base.RoundTrip(req)
		gaveUp <- err
	}()
	<-handshake
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("the request that gave up got an answer")
	}
	close(release)

	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithIdempotencyKeyContract())
	var err error
	var oe *otelretry.Error
	// Until the dial pooled the connection, net/http refuses the method
	// itself (invalid_request, rightly): poll, bounded.
	for end := time.Now().Add(10 * time.Second); badSeen.Load() == 0 && time.Now().Before(end); {
		bad := post(t, t.Context(), srv.URL, "x")
		bad.Method = "PO ST"
		bad.Header.Set("Idempotency-Key", "k-1")
		var resp *http.Response
		resp, err = tr.RoundTrip(bad)
		if resp != nil {
			resp.Body.Close()
		}
		if badSeen.Load() == 0 {
			if !errors.As(err, &oe) || oe.Reason != attrs.ReasonInvalidRequest {
				t.Fatalf("before the host saw any: %v; want invalid_request", err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if badSeen.Load() == 0 {
		t.Fatal("the pooled connection never took the request")
	}
	if errors.As(err, &oe) && oe.Reason == attrs.ReasonInvalidRequest {
		t.Errorf("the host received the keyed write %d time(s), yet: %v (attempts %d, %s/%s); want it retried as a keyed write whose answer was lost", badSeen.Load(), err, oe.Attempts, oe.Outcome, oe.Reason)
	} else {
		t.Logf("host saw %d; err %v", badSeen.Load(), err)
	}
}

// h2ServerCounting is a TLS server speaking HTTP/2 that counts the requests it
// handles and answers a 503 when fail is set (once), and a base with its
// HTTP/2 connection pooled.
func h2ServerCounting(t *testing.T, seen, fail *atomic.Int32) (*httptest.Server, *http.Transport) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if fail.CompareAndSwap(1, 0) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base := srv.Client().Transport.(*http.Transport)
	t.Cleanup(base.CloseIdleConnections)
	resp, err := base.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s; want HTTP/2", resp.Proto)
	}
	return srv, base
}

// net/http's HTTP/2 client refuses, once it has the connection and
// before it writes the headers, a connection-level field HTTP/2 forbids
// and HTTP/1 sends, a trailer key it forbids, a Host it does not accept
// (HTTP/1 sends it empty), and a :path it cannot make. The host sees nothing, and the same
// request is refused again: it ends stop (invalid_request) after one
// attempt, as row 24 says. They were retried as any transport error,
// three sends of a GET (reviewers' finds).
func TestAFieldHTTP2ForbidsIsARefusal(t *testing.T) {
	for name, mod := range map[string]func(*http.Request){
		"Connection":          func(r *http.Request) { r.Header.Set("Connection", "Upgrade-Insecure") },
		"Upgrade":             func(r *http.Request) { r.Header.Set("Upgrade", "websocket") },
		"Transfer-Encoding":   func(r *http.Request) { r.Header.Set("Transfer-Encoding", "gzip") },
		"trailer key":         func(r *http.Request) { r.Trailer = http.Header{"Content-Length": nil} },
		"Host":                func(r *http.Request) { r.Host = "bad host" },
		"IDNA Host, bad port": func(r *http.Request) { r.Host = "é.example:8 0" },
		":path": func(r *http.Request) {
			r.URL = &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Opaque: "x"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			var seen, fail atomic.Int32
			srv, base := h2ServerCounting(t, &seen, &fail)
			before := seen.Load()
			tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			req := get(t, t.Context(), srv.URL)
			mod(req)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) || oe.Reason != attrs.ReasonInvalidRequest || oe.Attempts != 1 {
				t.Errorf("err %v; want stop (invalid_request) after 1 attempt", err)
			}
			if n := seen.Load() - before; n != 0 {
				t.Errorf("the host saw %d", n)
			}
		})
	}
}

// flakyTracedBase is a base of one's own that reports the connection it
// took (a plain TCP connection, over which it speaks HTTP/1) through the
// request's ClientTrace, and whose first call fails there with an error it
// wraps with %w; later calls go to next.
type flakyTracedBase struct {
	next  http.RoundTripper
	calls atomic.Int32
}

func (b *flakyTracedBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.calls.Add(1) == 1 {
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil {
			if tr.GetConn != nil {
				tr.GetConn(r.URL.Host)
			}
			c1, c2 := net.Pipe()
			defer c1.Close()
			defer c2.Close()
			if tr.GotConn != nil {
				tr.GotConn(httptrace.GotConnInfo{Conn: c1})
			}
		}
		return nil, fmt.Errorf("pool: %w", errors.New("connection lost before the request was written"))
	}
	return b.next.RoundTrip(r)
}

// Only a connection known to speak HTTP/2 tells net/http's HTTP/2
// refusal: a base of one's own over a plain connection, whose transient
// failure on a websocket handshake's GET has the refusal's shape, is
// retried. It was stopped invalid_request, a connection not known to
// speak HTTP/1 taken for HTTP/2 (a reviewer's find).
func TestAnHTTP1UpgradesFailureIsNoHTTP2Refusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	base := &flakyTracedBase{next: inner}
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	req := get(t, t.Context(), srv.URL)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("err %v after %d calls; want the transient failure retried and answered", err, base.calls.Load())
	}
	resp.Body.Close()
}

// Such refusals cost the host's retry budget nothing (row 24): after four
// of them, a good GET's 503 is retried. They drained it: the 503 ended
// budget_exhausted after one attempt (a reviewer's find).
func TestFieldsHTTP2ForbidsCostNoBudget(t *testing.T) {
	var seen, fail atomic.Int32
	srv, base := h2ServerCounting(t, &seen, &fail)
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithBudget(&otelretry.Budget{}))
	for range 4 {
		req := get(t, t.Context(), srv.URL)
		req.Header.Set("Connection", "Upgrade-Insecure")
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Fatal("a refused request was answered")
		}
	}
	fail.Store(1)
	var res otelretry.Results
	resp, err := tr.RoundTrip(get(t, otelretry.WithResults(t.Context(), &res), srv.URL))
	if resp != nil {
		resp.Body.Close()
	}
	last, _ := res.Last()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("after 4 refusals, a good GET's 503: err %v, %s/%s after %d attempts; want 200 after a retry", err, last.Outcome, last.Reason, last.Attempts)
	}
}

// A header list over the limit the HTTP/2 peer advertised is refused by
// net/http's HTTP/2 client before it writes the headers: the host sees
// nothing, and the same request meets the same limit again. It ends stop
// (invalid_request) after one attempt, costing the budget nothing (row
// 24), also over another otelretry Transport, whose one refused attempt
// the outer reads so. It was retried as any transport error: three
// refusals, each charged (a limit otelretry cannot read; told by its
// error now), and over another otelretry Transport three inner
// operations (a reviewer's find).
func TestAHeaderListOverThePeersLimitIsARefusal(t *testing.T) {
	for _, stacked := range []bool{false, true} {
		t.Run(fmt.Sprintf("over another otelretry %v", stacked), func(t *testing.T) {
			var seen atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
			srv.EnableHTTP2 = true
			srv.Config.MaxHeaderBytes = 1 << 10 // advertised as SETTINGS_MAX_HEADER_LIST_SIZE
			srv.StartTLS()
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport)
			defer base.CloseIdleConnections()
			resp, err := base.RoundTrip(get(t, t.Context(), srv.URL)) // the peer's settings are known
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("proto %s; want HTTP/2", resp.Proto)
			}
			var below http.RoundTripper = base
			if stacked {
				below = otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			}
			budget := &otelretry.Budget{}
			tr := otelretry.NewTransport(below, otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithBudget(budget))
			before, available := seen.Load(), budget.Available(get(t, t.Context(), srv.URL))
			req := get(t, t.Context(), srv.URL)
			req.Header.Set("X-Large", strings.Repeat("a", 64<<10))
			resp, err = tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) || oe.Reason != attrs.ReasonInvalidRequest || oe.Attempts != 1 {
				t.Errorf("err %v; want stop (invalid_request) after 1 attempt", err)
			}
			if n := seen.Load() - before; n != 0 {
				t.Errorf("the host saw %d", n)
			}
			if n := budget.Available(get(t, t.Context(), srv.URL)); n != available {
				t.Errorf("Available = %d after the refusal, %d before; the host saw nothing", n, available)
			}
		})
	}
}
