// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The traffic generator: a long-lived client process in miniature. It
// sends operations with a known mix through the real transport to a server
// of its own on 127.0.0.1, and exports over OTLP/HTTP like an application:
// the client's spans, metrics and log events (WithLoggerProvider) as one
// service, the server's spans as another (two exporters, so a trace's
// spans reach the Collectors in separate requests). An in-memory reader and span recorder keep what the
// SDK sent, to compare with what the backends show.

// opKeyHeader carries the operation id to the server, which counts the
// attempts that reached it per operation.
const opKeyHeader = "X-Generator-Op"

// genScenario is one kind of operation of the mix.
type genScenario struct {
	name   string
	method string
	path   string
	// want is the outcome the caller must get back, and attempts the
	// number of requests the server must see.
	want     attrs.Outcome
	attempts int
	// interesting: tail sampling keeps every such trace (it retried,
	// checked state, or did not end return).
	interesting bool
	// stateCheck: the operation runs a state check (a state_check span).
	stateCheck bool
	// count is the number of operations of this kind in the measured mix.
	count int
	opts  []otelretry.Option
}

// genScenarios is the mix. Each interesting kind is kept by one policy of
// deploy/tiered/sampler.yaml on its own: the retried success and the
// hedged read by retry.attempts > 1 alone, deadline_exceeded and check_state (one
// attempt) by retry.outcome alone, the state-checked success (return, one
// attempt) by its state_check span alone.
func genScenarios(stateCheck func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error)) []genScenario {
	const ms = time.Millisecond
	limits := func(attemptTimeout time.Duration) []otelretry.Option {
		return []otelretry.Option{otelretry.WithDeadline(2 * time.Second), otelretry.WithAttemptTimeout(attemptTimeout),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10 * ms)), otelretry.WithMaxAttempts(3)}
	}
	// The stalling scenarios' attempt timeout is short, but not so short
	// that a loaded machine's dial and write of a retry take it all before
	// the request reaches the server, which counts what reached it (40 ms
	// did once, with the load average at 8).
	const stallTimeout = 150 * ms
	return []genScenario{
		{name: "plain success", method: http.MethodGet, path: "/ok", want: attrs.OutcomeReturn, attempts: 1,
			count: 1000, opts: limits(time.Second)},
		{name: "retried success", method: http.MethodGet, path: "/flaky", want: attrs.OutcomeReturn, attempts: 2,
			interesting: true, count: 100, opts: limits(time.Second)},
		{name: "Retry-After beyond the deadline", method: http.MethodGet, path: "/busy", want: attrs.OutcomeDeadlineExceeded,
			attempts: 1, interesting: true, count: 60, opts: limits(time.Second)},
		{name: "timeouts to max_attempts", method: http.MethodGet, path: "/slow", want: attrs.OutcomeMaxAttempts,
			attempts: 3, interesting: true, count: 40, opts: limits(stallTimeout)},
		// The attempt timeout does not cut a write it could not retry: the
		// operation's deadline does.
		{name: "POST timeout to check_state", method: http.MethodPost, path: "/stall", want: attrs.OutcomeCheckState,
			attempts: 1, interesting: true, count: 40, opts: append(limits(stallTimeout), otelretry.WithDeadline(400*ms))},
		{name: "POST timeout, state check: applied", method: http.MethodPost, path: "/apply-then-stall",
			want: attrs.OutcomeReturn, attempts: 1, interesting: true, stateCheck: true, count: 40,
			opts: append(limits(stallTimeout), otelretry.WithStateCheck(stateCheck))},
		// The first request stalls and its hedge answers: two requests, the
		// first superseded. MaxShare 1 lets every operation hedge (the
		// default 5 % would refuse most of the mix's hedges).
		{name: "hedged read", method: http.MethodGet, path: "/stall-first", want: attrs.OutcomeReturn, attempts: 2,
			interesting: true, count: 40,
			opts: append(limits(time.Second), otelretry.WithHedging(otelretry.Hedging{Delay: 100 * ms, MaxShare: 1}))},
	}
}

// genResult is one operation as the generator saw it.
type genResult struct {
	id       string
	scenario *genScenario
	warmup   bool
	// caller is what the caller got back: "status N", or the error's outcome.
	caller string
	// outcome is retry.outcome as the client recorded it, and attempts the
	// requests the server saw.
	outcome  string
	attempts int
}

type generator struct {
	service, serverService, instance string

	clientTP, serverTP *sdktrace.TracerProvider
	mp                 *sdkmetric.MeterProvider
	lp                 *sdklog.LoggerProvider
	reader             *sdkmetric.ManualReader
	spans              *tracetest.SpanRecorder

	server    *genServer
	srv       *http.Server
	baseURL   string
	base      *http.Transport
	scenarios []genScenario
	clients   []*http.Client
	seq       int
}

// newGenerator starts the generator's server and SDK; otlpHTTP is the base
// URL of an OTLP/HTTP receiver.
func newGenerator(t *testing.T, otlpHTTP, service, instance string) *generator {
	t.Helper()
	ctx := t.Context()
	g := &generator{service: service, serverService: service + "-server", instance: instance,
		reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder(), server: newGenServer()}
	prop := propagation.TraceContext{}

	newTP := func(service string, recorder sdktrace.SpanProcessor) *sdktrace.TracerProvider {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlpHTTP+"/v1/traces"))
		if err != nil {
			t.Fatal(err)
		}
		opts := []sdktrace.TracerProviderOption{
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service),
				attribute.String("service.instance.id", instance))),
			// Short batches: the samplers decide decision_wait after a
			// trace's first span arrives.
			sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(100*time.Millisecond)),
		}
		if recorder != nil {
			opts = append(opts, sdktrace.WithSpanProcessor(recorder))
		}
		return sdktrace.NewTracerProvider(opts...)
	}
	g.clientTP = newTP(g.service, g.spans)
	g.serverTP = newTP(g.serverService, nil)
	me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(otlpHTTP+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	g.mp = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", service),
			attribute.String("service.instance.id", instance))),
		sdkmetric.WithReader(g.reader),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(time.Second))),
		// Exemplars carry the trace and span id of the sampled span in the
		// recording context (the operation span).
		sdkmetric.WithExemplarFilter(exemplar.TraceBasedFilter),
	)

	// Log events: one retry.attempt record per attempt and one
	// retry.operation record per operation, through the agent, which
	// passes them on unsampled.
	le, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(otlpHTTP+"/v1/logs"))
	if err != nil {
		t.Fatal(err)
	}
	g.lp = sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", service),
			attribute.String("service.instance.id", instance))),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(le, sdklog.WithExportInterval(100*time.Millisecond))),
	)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.baseURL = "http://" + ln.Addr().String()
	g.srv = &http.Server{Handler: otelhttp.NewHandler(g.server.handler(), "generator-server",
		otelhttp.WithTracerProvider(g.serverTP), otelhttp.WithPropagators(prop))}
	go g.srv.Serve(ln)

	g.base = &http.Transport{MaxIdleConnsPerHost: 64}
	stateClient := &http.Client{Transport: otelhttp.NewTransport(g.base,
		otelhttp.WithTracerProvider(g.clientTP), otelhttp.WithPropagators(prop))}
	g.scenarios = genScenarios(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		return g.server.checkState(ctx, stateClient, g.baseURL, c.OperationID)
	})
	for _, sc := range g.scenarios {
		opts := append([]otelretry.Option{otelretry.WithTracerProvider(g.clientTP), otelretry.WithMeterProvider(g.mp),
			otelretry.WithLoggerProvider(g.lp), otelretry.WithPropagators(prop), otelretry.WithoutBudget()}, sc.opts...)
		g.clients = append(g.clients, &http.Client{Transport: otelretry.NewTransport(g.base, opts...)})
	}
	t.Cleanup(g.close)
	return g
}

func (g *generator) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g.srv.Close()
	g.base.CloseIdleConnections()
	g.clientTP.Shutdown(ctx)
	g.serverTP.Shutdown(ctx)
	g.mp.Shutdown(ctx)
	g.lp.Shutdown(ctx)
}

// plan returns the operations to send, shuffled with a fixed seed: each
// scenario's count, or one of each for the warm-up.
func (g *generator) plan(warmup bool) []genResult {
	var out []genResult
	for i := range g.scenarios {
		sc := &g.scenarios[i]
		n := sc.count
		if warmup {
			n = 1
		}
		for range n {
			g.seq++
			out = append(out, genResult{id: fmt.Sprintf("gen-%s-%05d", g.instance, g.seq), scenario: sc, warmup: warmup})
		}
	}
	rand.New(rand.NewPCG(1, uint64(len(out)))).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// run sends ops with at most workers in flight, spread evenly over spread:
// chunk i starts no earlier than spread*i/chunks after the start.
func (g *generator) run(ctx context.Context, ops []genResult, spread time.Duration, chunks, workers int) {
	start := time.Now()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for c := range chunks {
		if wait := time.Until(start.Add(spread * time.Duration(c) / time.Duration(chunks))); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		for i := c * len(ops) / chunks; i < (c+1)*len(ops)/chunks; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func(r *genResult) {
				defer func() { <-sem; wg.Done() }()
				r.caller = g.call(ctx, r)
			}(&ops[i])
		}
	}
	wg.Wait()
	outcomes := g.recorded(attrs.OutcomeKey)
	for i := range ops {
		ops[i].attempts = g.server.attempts(ops[i].id)
		ops[i].outcome = outcomes[ops[i].id]
	}
}

// call runs one operation and returns what the caller got back.
func (g *generator) call(ctx context.Context, r *genResult) string {
	sc := r.scenario
	client := g.clients[g.scenarioIndex(sc)]
	ctx = otelretry.WithOperationID(ctx, r.id)
	var body io.Reader
	if sc.method == http.MethodPost {
		body = strings.NewReader(`{"order":"` + r.id + `"}`)
	}
	req, err := http.NewRequestWithContext(ctx, sc.method, g.baseURL+sc.path, body)
	if err != nil {
		return err.Error()
	}
	req.Header.Set(opKeyHeader, r.id)
	resp, err := client.Do(req)
	if err != nil {
		var rerr *otelretry.Error
		if errors.As(err, &rerr) {
			return "error " + string(rerr.Outcome)
		}
		return "error: " + err.Error()
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("status %d", resp.StatusCode)
}

func (g *generator) scenarioIndex(sc *genScenario) int {
	for i := range g.scenarios {
		if &g.scenarios[i] == sc {
			return i
		}
	}
	panic("scenario not in the generator")
}

// flush exports every span, metric and log record buffered so far.
func (g *generator) flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return errors.Join(g.clientTP.ForceFlush(ctx), g.serverTP.ForceFlush(ctx), g.mp.ForceFlush(ctx), g.lp.ForceFlush(ctx))
}

// collect returns the retry metrics the SDK holds now, as Prometheus series.
func (g *generator) collect(ctx context.Context) (seriesSet, error) {
	var rm metricdata.ResourceMetrics
	if err := g.reader.Collect(ctx, &rm); err != nil {
		return nil, err
	}
	return seriesOf(rm, otelretry.ScopeName)
}

// traceOf maps each operation id to the trace id of its spans, from the
// spans the client recorded (by attribute: any shape).
func (g *generator) traceOf() map[string]string {
	out := map[string]string{}
	for _, s := range g.spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == attrs.OperationIDKey {
				out[kv.Value.AsString()] = s.SpanContext().TraceID().String()
			}
		}
	}
	return out
}

// opSpanIDs maps each operation id to the span ids the client recorded:
// its operation span's, and its attempt spans' by attempt number.
type opSpanIDs struct {
	op       string
	attempts map[int64]string
}

func (g *generator) spanIDs() map[string]*opSpanIDs {
	out := map[string]*opSpanIDs{}
	for _, s := range g.spans.Ended() {
		var id string
		var attempt int64
		isOp := false
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case attrs.OperationIDKey:
				id = kv.Value.AsString()
			case attrs.AttemptKey:
				attempt = kv.Value.AsInt64()
			case attrs.OutcomeKey:
				isOp = true
			}
		}
		if id == "" || (!isOp && attempt == 0) {
			continue
		}
		o := out[id]
		if o == nil {
			o = &opSpanIDs{attempts: map[int64]string{}}
			out[id] = o
		}
		if isOp {
			o.op = s.SpanContext().SpanID().String()
		} else {
			o.attempts[attempt] = s.SpanContext().SpanID().String()
		}
	}
	return out
}

// recorded maps each operation id to the value of key on the span that
// carries both (the operation span for retry.outcome).
func (g *generator) recorded(key attribute.Key) map[string]string {
	out := map[string]string{}
	for _, s := range g.spans.Ended() {
		var id, v string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case attrs.OperationIDKey:
				id = kv.Value.AsString()
			case key:
				v = kv.Value.Emit()
			}
		}
		if id != "" && v != "" {
			out[id] = v
		}
	}
	return out
}

// checkResults fails for every operation whose outcome or number of
// attempts is not the scenario's: the mix must be known exactly. An
// operation that ends return hands a success to the caller.
func checkResults(t *testing.T, ops []genResult) {
	t.Helper()
	bad := 0
	for _, r := range ops {
		ok := r.outcome == string(r.scenario.want) && r.attempts == r.scenario.attempts
		if r.scenario.want == attrs.OutcomeReturn {
			ok = ok && r.caller == "status 200"
		}
		if !ok {
			if bad++; bad <= 10 {
				t.Errorf("%s (%s): outcome %q after %d attempts (caller: %s), want %s after %d",
					r.id, r.scenario.name, r.outcome, r.attempts, r.caller, r.scenario.want, r.scenario.attempts)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d operations did not go as planned", bad, len(ops))
	}
}

// genServer plays the dependency, keyed by the operation id.
type genServer struct {
	mu      sync.Mutex
	calls   map[string]int  // requests per operation (state checks excluded)
	applied map[string]bool // writes applied, by operation
}

func newGenServer() *genServer {
	return &genServer{calls: map[string]int{}, applied: map[string]bool{}}
}

// maxStall bounds a handler that waits for the client to give up.
const maxStall = 5 * time.Second

func stall(r *http.Request) {
	t := time.NewTimer(maxStall)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func (s *genServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /flaky", func(w http.ResponseWriter, r *http.Request) {
		if s.attempts(r.Header.Get(opKeyHeader)) == 1 {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "recovered")
	})
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "come back later", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		stall(r)
	})
	// The first request of an operation stalls until its client gives up
	// (the hedge won), any other answers at once.
	mux.HandleFunc("GET /stall-first", func(w http.ResponseWriter, r *http.Request) {
		if s.attempts(r.Header.Get(opKeyHeader)) == 1 {
			stall(r)
			return
		}
		io.WriteString(w, "read")
	})
	mux.HandleFunc("POST /stall", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		stall(r)
	})
	mux.HandleFunc("POST /apply-then-stall", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.applied[r.Header.Get(opKeyHeader)] = true
		s.mu.Unlock()
		stall(r)
	})
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		ok := s.applied[r.PathValue("id")]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"applied":true}`)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(opKeyHeader); id != "" {
			s.mu.Lock()
			s.calls[id]++
			s.mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *genServer) attempts(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

// checkState asks the server whether the write of operation id was applied.
func (s *genServer) checkState(ctx context.Context, client *http.Client, baseURL, id string) (otelretry.StateResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/orders/"+url.PathEscape(id), nil)
	if err != nil {
		return otelretry.StateResult{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return otelretry.StateResult{}, err
	}
	if resp.StatusCode == http.StatusOK {
		return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return otelretry.StateResult{State: attrs.StateNotApplied}, nil
	}
	return otelretry.StateResult{State: attrs.StateUnknown}, nil
}
