// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// countingServer is a fake on 127.0.0.1 that counts what it executed per
// key (for example "POST /items/_search"): every request it received and
// read. answer plays the n-th request (from 1) of a key.
type countingServer struct {
	*httptest.Server
	mu     sync.Mutex
	count  map[string]int
	bodies map[string][]string
	times  map[string][]time.Time
	// headers are the request headers of each execution of a key, as the
	// server saw them (what an SDK adds per attempt).
	headers map[string][]http.Header
}

func newCountingServer(t *testing.T, key func(*http.Request) string, answer func(key string, n int, w http.ResponseWriter, r *http.Request)) *countingServer {
	s := &countingServer{count: map[string]int{}, bodies: map[string][]string{}, times: map[string][]time.Time{}, headers: map[string][]http.Header{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := key(r)
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.count[k]++
		n := s.count[k]
		s.bodies[k] = append(s.bodies[k], string(body))
		s.times[k] = append(s.times[k], time.Now())
		s.headers[k] = append(s.headers[k], r.Header.Clone())
		s.mu.Unlock()
		answer(k, n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func methodAndPath(r *http.Request) string { return r.Method + " " + r.URL.Path }

func (s *countingServer) executed(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[key]
}

func (s *countingServer) bodiesOf(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies[key]...)
}

// headerOf returns the value of header name in each execution of key, in
// order ("" where it was absent).
func (s *countingServer) headerOf(key, name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, h := range s.headers[key] {
		out = append(out, h.Get(name))
	}
	return out
}

// gap is the time between the first two executions of key (0 with fewer).
func (s *countingServer) gap(key string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.times[key]) < 2 {
		return 0
	}
	return s.times[key][1].Sub(s.times[key][0])
}

// testTransport is a fresh otelretry Transport with the tests' short
// limits (deadline 2s, attempt timeout 400ms, backoff 10ms).
func testTransport(opts ...otelretry.Option) *otelretry.Transport {
	return otelretry.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), testOptions(opts...)...)
}

// testOptions are the tests' short limits, then opts.
func testOptions(opts ...otelretry.Option) []otelretry.Option {
	return append([]otelretry.Option{
		otelretry.WithDeadline(2 * time.Second), otelretry.WithAttemptTimeout(400 * time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}, opts...)
}

// tries counts the calls an SDK made to the RoundTripper below it: each is
// a whole otelretry operation.
type tries struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (t *tries) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// WrappedRoundTripper lets a client that looks through wrappers (client-go's
// CancelRequest) reach the Transport below.
func (t *tries) WrappedRoundTripper() http.RoundTripper { return t.next }

// spanLog keeps the operation spans of the otelretry Transports given its
// option.
type spanLog struct{ rec *tracetest.SpanRecorder }

func newSpanLog() (*spanLog, otelretry.Option) {
	rec := tracetest.NewSpanRecorder()
	return &spanLog{rec}, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
}

// operations returns the attributes of each operation span ended so far,
// in the order they ended.
func (l *spanLog) operations() []map[attribute.Key]attribute.Value {
	var out []map[attribute.Key]attribute.Value
	for _, s := range l.rec.Ended() {
		fields := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			fields[kv.Key] = kv.Value
		}
		if _, ok := fields[attrs.AttemptsKey]; ok && s.SpanKind() == trace.SpanKindInternal {
			out = append(out, fields)
		}
	}
	return out
}

// callersIntents are Intents a caller gives a read, each with the tries it
// allows one answered 503, 503, 200: a recipe that marks the read
// repeatable keeps them.
var callersIntents = []struct {
	name string
	in   otelretry.Intent
	want int
}{{"MaxAttempts 2", otelretry.Intent{MaxAttempts: 2}, 2}, {"NoRetry", otelretry.Intent{NoRetry: true}, 1}}
