// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The body of the response handed to the caller belongs to the caller's
// context alone: read after the operation ended (its span ended when the
// headers came), past the attempt timeout and the operation deadline, it
// arrives whole.
func TestResponseBodyReadAfterTheOperationEndedArrivesWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head-")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "tail")
	}))
	defer srv.Close()
	rec, opts := tracingProviders()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(200*time.Millisecond))...)
	resp, err := rt.RoundTrip(get(t, context.Background(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if ops := spantest.Operations(rec.Ended()); len(ops) != 1 {
		t.Errorf("%d operation spans ended when the headers came, want 1", len(ops))
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "head-tail" {
		t.Errorf("read %q, %v; want head-tail", b, err)
	}
}

// The attempt timeout bounds the wait for an answer, not the body of the
// answer handed to the caller: a one-second stream is read whole with the
// defaults and with a 300ms attempt timeout, and only the caller's own
// context cuts it.
func TestStreamedBodyBelongsToTheCaller(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 20 {
			if i > 0 {
				select {
				case <-time.After(50 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			io.WriteString(w, "chunk\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close) // the subtests run in parallel, after this function returns
	cases := []struct {
		name      string
		opts      []otelretry.Option
		callerTTL time.Duration
		whole     bool
	}{
		{"defaults", nil, 0, true},
		{"300ms attempt timeout", []otelretry.Option{otelretry.WithAttemptTimeout(300 * time.Millisecond)}, 0, true},
		{"400ms operation deadline", []otelretry.Option{otelretry.WithDeadline(400 * time.Millisecond)}, 0, true},
		{"500ms caller deadline", nil, 500 * time.Millisecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, tc.opts...)}
			ctx := t.Context()
			if tc.callerTTL > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.callerTTL)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			chunks := strings.Count(string(data), "chunk\n")
			if tc.whole && (err != nil || chunks != 20) {
				t.Fatalf("read %d of 20 chunks, err %v: the stream was cut", chunks, err)
			}
			if !tc.whole && (err == nil || chunks >= 20) {
				t.Fatalf("read %d chunks, err %v: the caller's deadline did not cut the stream", chunks, err)
			}
		})
	}
}

// A 101 Switching Protocols answer is a success: the operation returns it,
// and its body stays a writable connection through the transport's
// wrappers, on loopback with net/http's own upgrade.
func TestSwitchingProtocolsKeepsTheConnectionWritable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		line, err := brw.ReadString('\n') // echo one line back
		if err == nil {
			brw.WriteString("echo: " + line)
			brw.Flush()
		}
	}))
	defer srv.Close()
	resp, rec := upgradeThrough(t, srv)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		t.Fatalf("the 101 body (%T) is not writable", resp.Body)
	}
	if _, err := io.WriteString(rw, "hello\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(rw).ReadString('\n')
		done <- line
	}()
	select {
	case line := <-done:
		if strings.TrimSpace(line) != "echo: hello" {
			t.Errorf("read %q, want the echo", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no echo within 5s")
	}
	rw.Close()
	op := spantest.Operations(rec.Ended())
	if len(op) != 1 || attrOf(op[0], attrs.OutcomeKey).AsString() != "return" {
		t.Errorf("operation spans %d, want one ending return", len(op))
	}
}

// errAfter is a body that reads text, then fails with err.
func errAfter(text string, err error) io.ReadCloser {
	return io.NopCloser(io.MultiReader(strings.NewReader(text), failingReader{err}))
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

// telemetryText is every span's name, attributes, status and events, as
// text.
func telemetryText(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%q %v %q\n", s.Name(), s.Attributes(), s.Status().Description)
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "  %q %v\n", e.Name, e.Attributes)
		}
	}
	return b.String()
}

// A response body's read error that names the request's URL reaches
// otelhttp's CLIENT span (its status, which otelhttp takes from the
// error's text) and the caller sanitized, as an attempt's error does: a
// base's *url.Error, and a cancellation cause the caller wrote, through
// net/http on 127.0.0.1. The error keeps its cause for errors.Is and
// errors.As, and error.type is its class (see
// TestABrokenBodyOfA2xxKeepsErrorTypeInTheVocabulary). A read error that
// names no URL is returned as it is. Before, the span's status repeated
// the password and the token.
func TestABodysReadErrorReachesTheSpanSanitized(t *testing.T) {
	const raw = "/v1/items?token=SECRET"
	t.Run("a base's *url.Error", func(t *testing.T) {
		h := newHarness(t, nil, otelretry.WithMaxAttempts(1))
		h.transprt = otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			body := errAfter("partial", &url.Error{Op: "Get", URL: r.URL.String(), Err: io.ErrUnexpectedEOF})
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body, Request: r}, nil
		}), otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp), otelretry.WithMaxAttempts(1))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://alice:SECRET@api.test"+raw))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		var ue *url.Error
		if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.As(err, &ue) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("read error %q: want it sanitized, its *url.Error and io.ErrUnexpectedEOF kept", err)
		}
		text := telemetryText(h.ended())
		if strings.Contains(text, "SECRET") || !strings.Contains(text, `{"error.type":"connection_reset"}`) {
			t.Errorf("telemetry repeats a secret, or lost the error's type:\n%s", text)
		}
	})
	t.Run("a cancellation cause, through net/http", func(t *testing.T) {
		srv := partialBodyServer(t, http.StatusOK)
		base := http.DefaultTransport.(*http.Transport).Clone()
		defer base.CloseIdleConnections()
		h := newHarness(t, nil)
		h.transprt = otelretry.NewTransport(base, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp))
		ctx, cancel := context.WithCancelCause(t.Context())
		req := get(t, ctx, strings.Replace(srv.URL, "http://", "http://alice:SECRET@", 1)+raw)
		resp, err := h.transprt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 7)); err != nil {
			t.Fatal(err)
		}
		cause := fmt.Errorf("shutting down: abandoning GET %s", req.URL)
		cancel(cause)
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, cause) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("read error %q: want it sanitized, its cause kept", err)
		}
		if text := telemetryText(h.ended()); strings.Contains(text, "SECRET") {
			t.Errorf("telemetry repeats a secret:\n%s", text)
		}
	})
	t.Run("a timeout stays a net.Error", func(t *testing.T) {
		for name, cause := range map[string]func(u string) error{
			"a *url.Error":      func(u string) error { return &url.Error{Op: "Get", URL: u, Err: timeoutErr{}} },
			"another net.Error": func(u string) error { return proxyTimeout{u} },
			"a *url.Error of an error with Timeout only, naming the URL": func(u string) error {
				return &url.Error{Op: "Get", URL: u, Err: stalledRead{u}}
			},
		} {
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: errAfter("partial", cause(r.URL.String())), Request: r}, nil
			}))
			resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test"+raw))
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() || !os.IsTimeout(err) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("%s: read error %T %q: want a sanitized net.Error that is a timeout", name, err, err)
			}
			if _, isURLError := err.(*url.Error); strings.HasPrefix(name, "a *url.Error") && !isURLError {
				t.Errorf("%s: read error %T: want a *url.Error still", name, err)
			}
		}
	})
	t.Run("an error that names no URL", func(t *testing.T) {
		rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: errAfter("partial", io.ErrUnexpectedEOF), Request: r}, nil
		}))
		resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test"+raw))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != io.ErrUnexpectedEOF {
			t.Errorf("read error %#v, want io.ErrUnexpectedEOF itself", err)
		}
	})
}

// timeoutErr is a read timeout, as a net.Error reports one.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// proxyTimeout is a read timeout of a proxy, whose message names the URL.
type proxyTimeout struct{ url string }

func (e proxyTimeout) Error() string { return "proxy timeout reading " + e.url }
func (proxyTimeout) Timeout() bool   { return true }
func (proxyTimeout) Temporary() bool { return true }

// A body's *url.Error whose inner error names the URL too stays a
// *url.Error, its URL and its inner error sanitized: errors.As finds the
// sanitized copy, errors.Is the inner error's cause.
func TestABodysURLErrorWhoseInnerErrorNamesTheURLStaysOne(t *testing.T) {
	const raw = "/v1/items?token=SECRET"
	rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		inner := fmt.Errorf("proxy reset reading %s: %w", r.URL, io.ErrUnexpectedEOF)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: errAfter("partial", &url.Error{Op: "Get", URL: r.URL.String(), Err: inner}), Request: r}, nil
	}), otelretry.WithMaxAttempts(1))
	resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test"+raw))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(err.Error(), "SECRET") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read error %q: want it sanitized, io.ErrUnexpectedEOF kept", err)
	}
	if _, ok := err.(*url.Error); !ok {
		t.Errorf("read error %T %q: want a *url.Error still (CHANGELOG: a *url.Error stays one)", err, err)
	}
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.URL, "SECRET") {
		t.Errorf("errors.As gives a *url.Error whose URL is %q, unsanitized, where one whose inner error does not name the URL gives it sanitized", ue.URL)
	}
}

// A read timeout of a response body, through net/http on 127.0.0.1 with a
// recording span (the attempt then watches its body's end), is a net.Error
// that os.IsTimeout tells: a 200's is the *net.OpError itself; a failed
// answer's (404) keeps the answer's error.type for otelhttp's span, and
// stays a net.Error. Before, the 404's was no net.Error.
func TestABodysReadTimeoutStaysANetError(t *testing.T) {
	for _, status := range []int{200, 404} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := partialBodyServer(t, status)
			base := http.DefaultTransport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			dial := base.DialContext
			base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err == nil {
					c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				}
				return c, err
			}
			h := newHarness(t, nil)
			h.transprt = otelretry.NewTransport(base, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp), otelretry.WithMaxAttempts(1))
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), srv.URL+"/x"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			var opErr *net.OpError
			if !errors.As(err, &opErr) {
				t.Fatalf("read error %T %q: want a read timeout", err, err)
			}
			if status == http.StatusOK && err != error(opErr) {
				t.Errorf("read error %T %q: want the *net.OpError itself, which names no URL", err, err)
			}
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() || !os.IsTimeout(err) {
				t.Errorf("read error %T %q: want a net.Error that is a timeout (os.IsTimeout)", err, err)
			}
		})
	}
}

// partialBodyServer answers status with the first 7 bytes ("partial") of a
// 100-byte body, then holds the rest until the request or the test ends.
func partialBodyServer(t *testing.T, status int) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(status)
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handler returns, then Close
	return srv
}

// stalledRead tells a timeout, with no Temporary (as *os.SyscallError),
// and names the URL.
type stalledRead struct{ url string }

func (e stalledRead) Error() string { return "stalled reading " + e.url }
func (stalledRead) Timeout() bool   { return true }

// upgradeThrough asks srv, through otelretry over a clone of the server's
// transport with a span recorder, to switch to the "echo" protocol, and
// returns the answer and the spans.
func upgradeThrough(t *testing.T, srv *httptest.Server) (*http.Response, *tracetest.SpanRecorder) {
	t.Helper()
	base := srv.Client().Transport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	rec := tracetest.NewSpanRecorder()
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, rec
}

// dribble is a response body fed by a slow source whose Close does not
// stop its Reads (io.NopCloser over a stream): a byte a tick. It counts
// the Reads begun after its Close.
type dribble struct {
	tick       time.Duration
	left       int
	closed     atomic.Bool
	afterClose atomic.Int32
}

func (b *dribble) Read(p []byte) (int, error) {
	if b.closed.Load() {
		b.afterClose.Add(1)
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.tick)
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = 'x'
	b.left--
	return 1, nil
}

func (b *dribble) Close() error { b.closed.Store(true); return nil }

// The drain of a discarded 503 is cut at its bound (the pause before the
// next attempt) or at the caller's cancellation by closing the body: a
// body whose Reads go on after its Close is read no more once it is cut
// (before: 4,079 Reads after the Close, the 20 ms drain taking 4.7 s).
func TestADrainCutReadsNoMore(t *testing.T) {
	for _, canceled := range []bool{false, true} {
		body := &dribble{tick: 500 * time.Microsecond, left: 4096}
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls++; calls == 1 {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, ContentLength: 4096, Body: body, Header: http.Header{}, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		pause := 20 * time.Millisecond
		ctx, cancel := context.WithCancel(t.Context())
		if canceled {
			pause = 10 * time.Second
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(pause)), otelretry.WithoutBudget())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/x", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		cancel()
		if n := body.afterClose.Load(); !body.closed.Load() || n > 1 {
			t.Errorf("canceled %v: the drain's body closed %v, %d Reads begun after its Close (at most the one racing it)", canceled, body.closed.Load(), n)
		}
	}
}

// A failed answer handed to the caller (a 500 not retried) whose body the
// server cuts short gives the caller io.ErrUnexpectedEOF itself, as a 2xx
// does: the error that only told otelhttp the answer's error.type stays
// below the caller (before: a *bodyError, so err == io.ErrUnexpectedEOF
// failed), and the span keeps error.type 500.
func TestAFailedAnswersCutBodyGivesTheErrorItself(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		buf.WriteString("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100\r\n\r\nabc")
		buf.Flush()
		conn.Close()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithMaxAttempts(1),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != io.ErrUnexpectedEOF {
		t.Errorf("the read error of a 500's cut body: %T %v, want io.ErrUnexpectedEOF itself", err, err)
	}
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			if got := attrOf(s, attrs.ErrorTypeKey).AsString(); got != "500" {
				t.Errorf("the CLIENT span's error.type: %q, want 500", got)
			}
		}
	}
}

// deafBody blocks every Read until its Close, as an in-memory pipe does.
type deafBody struct{ closed chan struct{} }

func (b *deafBody) Read([]byte) (int, error) { <-b.closed; return 0, io.ErrClosedPipe }
func (b *deafBody) Close() error             { close(b.closed); return nil }

// A discarded 503 whose drain is cut at its bound, or breaks, through a
// base that reports nothing of the wire, keeps the CLIENT span's
// error.type the answer's: every read error of the drain (a body read on
// after its Close, one its Close unblocks, one the server cut short)
// carries it (before: *errors.errorString, the read error as the span's
// status).
func TestADrainCutKeepsTheAnswersErrorType(t *testing.T) {
	for name, body := range map[string]func() io.ReadCloser{
		"read on after its Close": func() io.ReadCloser { return &dribble{tick: 500 * time.Microsecond, left: 4096} },
		"unblocked by its Close":  func() io.ReadCloser { return &deafBody{closed: make(chan struct{})} },
		"broken in the drain": func() io.ReadCloser {
			return io.NopCloser(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(io.ErrUnexpectedEOF)))
		},
	} {
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls++; calls == 1 {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, ContentLength: 4096, Body: body(), Header: http.Header{}, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		rec := tracetest.NewSpanRecorder()
		tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)),
			otelretry.WithoutBudget(), otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
		resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		att := spantest.Attempts(rec.Ended())
		if len(att) != 2 {
			t.Fatalf("%s: %d attempt spans", name, len(att))
		}
		if got := attrOf(att[0], attrs.ErrorTypeKey).AsString(); got != "503" {
			t.Errorf("%s: the cut drain's CLIENT span has error.type %q (status %q), want the answer's 503", name, got, att[0].Status().Description)
		}
	}
}

// A body read to its end and never closed (net/http frees the request at
// EOF, and reuses its connection) releases its attempt: the attempt's
// context ends, and leaves nothing registered under a long-lived caller's
// context, where each such body held about 5 KB before. The connection is
// still reused.
func TestABodyReadToItsEndReleasesItsAttempt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	var sent []context.Context
	client := &http.Client{Transport: otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.Context())
		return base.RoundTrip(r)
	}))}
	caller, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reused []bool
	for range 2 {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(caller, &httptrace.ClientTrace{
			GotConn: func(c httptrace.GotConnInfo) { reused = append(reused, c.Reused) },
		}), http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body, err := io.ReadAll(resp.Body); err != nil || string(body) != "ok" {
			t.Fatalf("body %q, %v", body, err)
		}
		if err := sent[len(sent)-1].Err(); err == nil {
			t.Error("the attempt's context outlives its body read to its end")
		}
	}
	if len(reused) != 2 || !reused[1] {
		t.Errorf("connections reused: %v, want the second request on the first's connection", reused)
	}
}
