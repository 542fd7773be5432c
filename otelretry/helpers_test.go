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
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// harness wires a Transport over a scripted base with recording providers.
type harness struct {
	base     *scripted.Transport
	spans    *tracetest.SpanRecorder
	reader   *sdkmetric.ManualReader
	client   *http.Client
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	transprt *otelretry.Transport
}

func newHarness(t *testing.T, steps []scripted.Step, opts ...otelretry.Option) *harness {
	t.Helper()
	h := &harness{base: scripted.New(steps...), spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	h.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	all := append([]otelretry.Option{otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp)}, opts...)
	h.transprt = otelretry.NewTransport(h.base, all...)
	h.client = &http.Client{Transport: h.transprt}
	return h
}

func (h *harness) ended() []sdktrace.ReadOnlySpan { return h.spans.Ended() }

func (h *harness) attempts() []sdktrace.ReadOnlySpan { return spantest.Attempts(h.ended()) }

func (h *harness) operation(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ops := spantest.Operations(h.ended())
	if len(ops) != 1 {
		t.Fatalf("got %d operation spans, want 1", len(ops))
	}
	return ops[0]
}

// event is the attempt event as read back from an attempt span.
type event struct {
	OperationID, RequestID string
	Attempt                int64
	Method                 string
	Status                 int64 // 0: absent
	ErrorClass             string
	ElapsedMs, RemainingMs int64
	Decision               string
	RetryAfterMs           int64 // -1: absent
	BackoffMs              int64 // -1: absent
}

func readEvent(t *testing.T, s sdktrace.ReadOnlySpan) event {
	t.Helper()
	get := func(k attribute.Key) attribute.Value { v, _ := spantest.Attr(s, k); return v }
	has := func(k attribute.Key) bool { _, ok := spantest.Attr(s, k); return ok }
	e := event{
		OperationID:  get("retry.operation.id").AsString(),
		RequestID:    get("retry.request.id").AsString(),
		Attempt:      get("retry.attempt").AsInt64(),
		Method:       get("http.request.method").AsString(),
		Status:       get("http.response.status_code").AsInt64(),
		ErrorClass:   get("retry.error_class").AsString(),
		ElapsedMs:    get("retry.elapsed_ms").AsInt64(),
		RemainingMs:  get("retry.remaining_ms").AsInt64(),
		Decision:     get("retry.decision").AsString(),
		RetryAfterMs: -1, BackoffMs: -1,
	}
	if has("retry.retry_after_ms") {
		e.RetryAfterMs = get("retry.retry_after_ms").AsInt64()
	}
	if has("retry.backoff_ms") {
		e.BackoffMs = get("retry.backoff_ms").AsInt64()
	}
	if has("http.response.status_code") == has("retry.error_class") {
		t.Errorf("attempt %d: want exactly one of status and error class, got status=%v error_class=%v",
			e.Attempt, has("http.response.status_code"), has("retry.error_class"))
	}
	return e
}

func (h *harness) events(t *testing.T) []event {
	t.Helper()
	var out []event
	for _, s := range h.attempts() {
		out = append(out, readEvent(t, s))
	}
	return out
}

func attrOf(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	v, _ := spantest.Attr(s, k)
	return v
}

func attrValue(kvs []attribute.KeyValue, k attribute.Key) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// errBaseTimeout is a timeout the base itself reports, as a read deadline
// or net/http's ResponseHeaderTimeout does: a net.Error whose Timeout is
// true.
var errBaseTimeout error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

func get(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

var seedOptions = []otelretry.Option{
	otelretry.WithMaxAttempts(3),
	otelretry.WithDeadline(400 * time.Millisecond),
	otelretry.WithBackoff(otelretry.ConstantBackoff(40 * time.Millisecond)),
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// answersAfter is a base that answers 200 after the time wait gives the
// request, or ends with the request's context.
func answersAfter(wait func(*http.Request) time.Duration) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		select {
		case <-time.After(wait(r)):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
}

// reusedResponse is a base that allocates nothing: it answers every call
// with the same response, cycling through statuses, and a body rewound for
// each call.
type reusedResponse struct {
	statuses []int
	calls    int
	resp     http.Response
	body     rewoundBody
}

func (b *reusedResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	b.resp.StatusCode = b.statuses[b.calls%len(b.statuses)]
	b.calls++
	b.body.Reset("ok")
	b.resp.Body = &b.body
	b.resp.Request = req
	return &b.resp, nil
}

type rewoundBody struct{ strings.Reader }

func (*rewoundBody) Close() error { return nil }

// checkError holds any error RoundTrip returns to its contract: an *Error
// with an outcome from the closed set.
func checkError(err error) error {
	var e *otelretry.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("error %v is not an *otelretry.Error", err)
	}
	if !e.Outcome.Valid() || e.Outcome == attrs.OutcomeReturn {
		return fmt.Errorf("error with outcome %q", e.Outcome)
	}
	return nil
}

// countedBodies hands out request bodies and counts how often each is
// closed: the caller's body and every copy GetBody makes must be closed
// exactly once, whatever path the operation takes.
type countedBodies struct {
	mu        sync.Mutex
	closes    []int
	getBodyOK int // GetBody copies allowed before it fails; -1: always
}

func (c *countedBodies) next() *countedBody {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes = append(c.closes, 0)
	return &countedBody{Reader: strings.NewReader("payload"), c: c, i: len(c.closes) - 1}
}

func (c *countedBodies) request(t *testing.T, ctx context.Context, method string, replayable bool) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "http://api.test/things", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Body, req.ContentLength = c.next(), int64(len("payload"))
	if replayable {
		req.GetBody = func() (io.ReadCloser, error) {
			c.mu.Lock()
			fail := c.getBodyOK == 0
			if c.getBodyOK > 0 {
				c.getBodyOK--
			}
			c.mu.Unlock()
			if fail {
				return nil, errors.New("body source gone")
			}
			return c.next(), nil
		}
	}
	return req
}

func (c *countedBodies) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range c.closes {
		if n != 1 {
			t.Errorf("body %d (of %d) closed %d times, want exactly once", i, len(c.closes), n)
		}
	}
}

type countedBody struct {
	io.Reader
	c *countedBodies
	i int
}

func (b *countedBody) Close() error {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	b.c.closes[b.i]++
	return nil
}

// tracingProviders returns recording trace providers with the W3C
// propagator, so that otelhttp injects a traceparent into each attempt.
func tracingProviders() (*tracetest.SpanRecorder, []otelretry.Option) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return rec, []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithPropagators(propagation.TraceContext{})}
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

// postReq is a POST of an order to api.test, made with ctx.
func postReq(t *testing.T, ctx context.Context) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// dumpSpans renders every ended span for error messages and secret scans.
func dumpSpans(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s kind=%v status=%v %q\n", s.Name(), s.SpanKind(), s.Status().Code, s.Status().Description)
		for _, kv := range s.Attributes() {
			fmt.Fprintf(&b, "    %s=%s\n", kv.Key, kv.Value.Emit())
		}
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "    event %s %v\n", e.Name, e.Attributes)
		}
	}
	return b.String()
}

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

func (s *recordingServer) received() []wireRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wireRecord(nil), s.seen...)
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

func spantestAttr(s sdktrace.ReadOnlySpan, k attribute.Key) (string, bool) {
	v, ok := spantest.Attr(s, k)
	return v.Emit(), ok
}

// poisonedConns breaks every connection after its first request: the next
// write on it fails at once, before a byte is written.
type poisonedConns struct{ dialer net.Dialer }

func (p *poisonedConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := p.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	pc := &poisonedConn{Conn: c}
	return pc, nil
}

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

// keepDeadConnection makes client keep an idle connection to url, then
// poisons it (see poisonableTransport): the next request's write on it
// fails before a byte is written.
func keepDeadConnection(t *testing.T, client *http.Client, url string, poison func()) {
	t.Helper()
	warm, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, warm.Body)
	warm.Body.Close()
	poison()
}

// logRecorder is an sdk/log Processor that keeps a copy of every record.
type logRecorder struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (r *logRecorder) OnEmit(_ context.Context, rec *sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

func (*logRecorder) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (*logRecorder) Shutdown(context.Context) error { return nil }

func (*logRecorder) ForceFlush(context.Context) error { return nil }

func (r *logRecorder) named(name string) []sdklog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdklog.Record
	for _, rec := range r.records {
		if rec.EventName() == name {
			out = append(out, rec)
		}
	}
	return out
}

func recordAttrs(rec sdklog.Record) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	rec.WalkAttributes(func(kv attribute.KeyValue) bool {
		m[kv.Key] = kv.Value
		return true
	})
	return m
}

func newLogHarness(t *testing.T, steps []scripted.Step, opts ...otelretry.Option) (*harness, *logRecorder) {
	t.Helper()
	rec := &logRecorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(rec))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return newHarness(t, steps, append(opts, otelretry.WithLoggerProvider(lp))...), rec
}

// startAttributes is a SpanProcessor that keeps the attributes every span
// has when it starts.
type startAttributes struct {
	mu    sync.Mutex
	attrs [][]attribute.KeyValue
}

func (p *startAttributes) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attrs = append(p.attrs, s.Attributes())
}

func (p *startAttributes) seen() [][]attribute.KeyValue {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attrs
}

func (*startAttributes) OnEnd(sdktrace.ReadOnlySpan) {}

func (*startAttributes) Shutdown(context.Context) error { return nil }

func (*startAttributes) ForceFlush(context.Context) error { return nil }

// captureOtelErrors installs an error handler that keeps what otel.Handle
// receives, and restores the previous one when the test ends.
func captureOtelErrors(t *testing.T) func() []error {
	t.Helper()
	var (
		mu   sync.Mutex
		errs []error
	)
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}

// roundTripRecovered sends req through rt, closes the body of a response,
// and returns the panic that reached the caller (nil for none).
func roundTripRecovered(rt http.RoundTripper, req *http.Request) (recovered any) {
	defer func() { recovered = recover() }()
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	return nil
}

// onAGoroutine runs f on a goroutine of its own, which a panic or a
// runtime.Goexit in f ends, and reports whether f returned, and the panic
// that ended it (nil for none, and for a Goexit).
func onAGoroutine(f func()) (returned bool, recovered any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { recovered = recover() }()
		f()
		returned = true
	}()
	<-done
	return returned, recovered
}

// openSpans names the spans rec saw start and not end.
func openSpans(rec *tracetest.SpanRecorder) []string {
	ended := map[trace.SpanID]bool{}
	for _, s := range rec.Ended() {
		ended[s.SpanContext().SpanID()] = true
	}
	var open []string
	for _, s := range rec.Started() {
		if !ended[s.SpanContext().SpanID()] {
			open = append(open, s.Name())
		}
	}
	return open
}

// drainingOKAfter is a base that reads and closes each request's body and
// answers 200 after d, or the request's context error if it ends first.
func drainingOKAfter(d time.Duration) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
}
