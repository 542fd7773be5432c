// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

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

func (d *dropSecondRequest) count(method string) int64 {
	if c, ok := d.received.Load(method); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
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

func spantestAttr(s sdktrace.ReadOnlySpan, k attribute.Key) (string, bool) {
	v, ok := spantest.Attr(s, k)
	return v.Emit(), ok
}

// poisonedConns breaks every connection after its first request: the next
// write on it fails at once, before a byte is written.
type poisonedConns struct{ dialer net.Dialer }

type poisonedConn struct {
	net.Conn
	dead atomic.Bool
}

func (c *poisonedConn) Write(p []byte) (int, error) {
	if c.dead.Load() {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	}
	return c.Conn.Write(p)
}

func (p *poisonedConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := p.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	pc := &poisonedConn{Conn: c}
	return pc, nil
}

// poisonableTransport is a net/http transport whose connections poison
// breaks: after it, the next write on each fails at once, before a byte
// is written (a keep-alive connection the server closed).
func poisonableTransport(t *testing.T) (*http.Transport, func()) {
	var mu sync.Mutex
	var conns []*poisonedConn
	p := &poisonedConns{}
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := p.dial(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c.(*poisonedConn))
			mu.Unlock()
		}
		return c, err
	}}
	t.Cleanup(base.CloseIdleConnections)
	return base, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.dead.Store(true)
		}
	}
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
	warm, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, warm.Body)
	warm.Body.Close()
	poison() // the idle connection now fails before writing

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

// http.Client's Timeout over a RoundTripper that is not *http.Transport
// closes the legacy Request.Cancel channel before its context notices.
// Every run must still record a timeout, and a write that was sent must
// end with its outcome unknown, never stop: the caller's deadline passed
// (deadline_exceeded, reason caller), and the Results slot keeps the
// unknown outcome, which http.Client flattens out of the error whenever
// its own timer fires before its context's.
func TestClientTimeoutIsATimeout(t *testing.T) {
	var executed sync.Map // run -> true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		executed.Store(r.Header.Get("X-Run"), true)
		select {
		case <-time.After(500 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Timeout: 200 * time.Millisecond, Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
	const runs = 40
	var wg sync.WaitGroup
	unknown := make([]bool, runs)
	for i := range runs {
		wg.Go(func() {
			var results otelretry.Results
			ctx := otelretry.WithResults(context.Background(), &results)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader("x"))
			req.Header.Set("X-Run", fmt.Sprint(i))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Error("a 500ms answer beat a 200ms timeout")
				return
			}
			last, ok := results.Last()
			if !ok || last.Outcome != attrs.OutcomeDeadlineExceeded || last.Reason != attrs.ReasonCaller {
				t.Errorf("results = %+v; want deadline_exceeded (caller)", results.Operations())
			}
			unknown[i] = results.OutcomeUnknown()
		})
	}
	wg.Wait()
	srv.Close() // waits for the handlers
	for i, u := range unknown {
		// A loaded machine may cut a run before it had a connection: it was
		// not sent, and says so. Every run the server executed is unknown.
		if _, ok := executed.Load(fmt.Sprint(i)); ok && !u {
			t.Errorf("run %d: the server executed the write, but the results do not say its outcome is unknown", i)
		}
	}
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) > runs {
		t.Fatalf("attempts = %d, want at most %d", len(attempts), runs)
	}
	for _, a := range attempts {
		class, decision, reason := attrOf(a, attrs.ErrorClassKey).AsString(), attrOf(a, attrs.DecisionKey).AsString(), attrOf(a, attrs.ReasonKey).AsString()
		if class != "timeout" || decision != "deadline_exceeded" || reason != "caller" {
			t.Errorf("%s: error class %q, decision %q (%s); want timeout, deadline_exceeded (caller)",
				attrOf(a, attrs.RequestIDKey).AsString(), class, decision, reason)
		}
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

// redirectSteps is a scripted chain: each hop answers 307 to the next
// after delay, the last 200.
func redirectSteps(hops int, delay time.Duration) []scripted.Step {
	var steps []scripted.Step
	for i := 1; i < hops; i++ {
		steps = append(steps, scripted.Step{Delay: delay, Status: http.StatusTemporaryRedirect,
			Header: http.Header{"Location": {"/hop-" + string(rune('0'+i))}}})
	}
	return append(steps, scripted.Step{Delay: delay, Status: 200})
}

// The hops of a redirect chain stay inside one operation's contract: one
// operation span each, the shared operation id, attempt numbers and
// request ids counting on across hops, the attempt limit per hop, and the
// deadline measured from the first hop.
func TestRedirectChainIsOneOperationContract(t *testing.T) {
	t.Run("deadline from the first hop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, redirectSteps(4, 250*time.Millisecond), otelretry.WithDeadline(400*time.Millisecond))
			start := time.Now()
			ctx := otelretry.WithOperationID(t.Context(), "op-redirect")
			resp, err := h.client.Do(get(t, ctx, "http://api.test/start"))
			if err == nil {
				resp.Body.Close()
				t.Fatal("a 4-hop chain of 250ms hops beat a 400ms deadline")
			}
			if took := time.Since(start); took != 400*time.Millisecond {
				t.Errorf("the chain took %v, want 400ms (the first hop's deadline)", took)
			}
			var ids []string
			for _, e := range h.events(t) {
				ids = append(ids, e.RequestID)
			}
			if strings.Join(ids, ",") != "op-redirect/attempt-1,op-redirect/attempt-2" {
				t.Errorf("request ids = %v, want attempt-1 then attempt-2", ids)
			}
		})
	})
	t.Run("ids count on across hops", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			steps := []scripted.Step{{Status: 503}, {Status: 503}, {Status: 307, Header: http.Header{"Location": {"/next"}}}, {Status: 200}}
			h := newHarness(t, steps, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			ctx := otelretry.WithOperationID(t.Context(), "op-42")
			resp, err := h.client.Do(get(t, ctx, "http://api.test/start"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ev := h.events(t)
			if len(ev) != 4 || ev[3].RequestID != "op-42/attempt-4" || ev[3].Attempt != 4 {
				t.Fatalf("events = %+v, want the second hop's first call to be op-42/attempt-4", ev)
			}
			ops := spantest.Operations(h.ended())
			if len(ops) != 2 {
				t.Fatalf("operation spans = %d, want one per hop", len(ops))
			}
			for _, op := range ops {
				if attrOf(op, attrs.OperationIDKey).AsString() != "op-42" {
					t.Errorf("hop with operation id %q", attrOf(op, attrs.OperationIDKey).AsString())
				}
				_, marked := spantest.Attr(op, attrs.RedirectsKey)
				if hops := attrOf(op, attrs.AttemptsKey).AsInt64(); marked != (hops == 1) {
					t.Errorf("hop with %d attempts: redirect marker %v", hops, marked)
				}
				if _, repeat := spantest.Attr(op, attrs.RepeatKey); repeat {
					t.Errorf("a redirect hop is marked as a repeat")
				}
			}
		})
	})
	t.Run("without an operation id, the chain shares the generated one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, redirectSteps(3, time.Millisecond))
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/start"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ev := h.events(t)
			if len(ev) != 3 || ev[0].OperationID != ev[2].OperationID || ev[2].RequestID != ev[0].OperationID+"/attempt-3" {
				t.Fatalf("events = %+v, want one id across the chain, attempts 1 to 3", ev)
			}
		})
	})
}

// An operation that repeats an earlier one under the same context (an
// outer retry layer, a loop) is marked, with or without WithOperationID;
// a redirect hop is not.
func TestRepeatedOperationsAreMarked(t *testing.T) {
	for _, withID := range []bool{true, false} {
		t.Run(map[bool]string{true: "WithOperationID", false: "parent span"}[withID], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Status: 500}}, otelretry.WithMaxAttempts(1))
				ctx := t.Context()
				if withID {
					ctx = otelretry.WithOperationID(ctx, "op-order")
				} else {
					var parent trace.Span
					ctx, parent = h.tp.Tracer("caller").Start(ctx, "caller")
					defer parent.End()
				}
				for range 3 { // an outer layer resending the POST
					resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "x"))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				var repeats []int64
				for _, op := range spantest.Operations(h.ended()) {
					repeats = append(repeats, attrOf(op, attrs.RepeatKey).AsInt64())
				}
				if len(repeats) != 3 || repeats[0] != 0 || repeats[1] != 1 || repeats[2] != 2 {
					t.Fatalf("retry.operation.repeat = %v, want absent, 1, 2", repeats)
				}
			})
		})
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

// The attempt timeout cuts only what the policy could retry. A create that
// takes 400ms (a chat completion) under a 100ms attempt timeout and a 5s
// deadline is answered, once; a read as slow is cut and retried; and a
// read's own Intent.AttemptTimeout replaces the Transport's.
func TestAttemptTimeoutCutsOnlyWhatCouldBeRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		select {
		case <-time.After(400 * time.Millisecond):
			io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	cases := []struct {
		name      string
		method    string
		intent    otelretry.Intent
		wantCalls int32
		wantOK    bool
	}{
		{"a slow create is answered, once", http.MethodPost, otelretry.Intent{}, 1, true},
		{"a slow read is cut and retried", http.MethodGet, otelretry.Intent{}, 2, false},
		{"a read sent as POST is cut and retried", http.MethodPost, otelretry.Intent{Repeatable: true}, 2, false},
		{"a read with a longer attempt timeout of its own is answered", http.MethodGet, otelretry.Intent{AttemptTimeout: 2 * time.Second}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithAttemptTimeout(100*time.Millisecond),
				otelretry.WithDeadline(5*time.Second), otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
			ctx := otelretry.WithIntent(t.Context(), tc.intent)
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL+"/v1/chat/completions", strings.NewReader("{}"))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.wantOK {
				t.Errorf("err = %v, want success %v", err, tc.wantOK)
			}
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("the server executed %d calls, want %d", got, tc.wantCalls)
			}
		})
	}
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
