// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// shipOnce calls ship with the first context it is handed, as telemetry
// that ships its records at once does.
type shipOnce struct {
	ship func(context.Context)
	done *atomic.Bool
}

func (s shipOnce) handle(ctx context.Context) {
	if s.done.CompareAndSwap(false, true) {
		s.ship(ctx)
	}
}

type shippingHandler struct{ shipOnce }

func (h shippingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h shippingHandler) Handle(ctx context.Context, _ slog.Record) error {
	h.handle(ctx)
	return nil
}
func (h shippingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h shippingHandler) WithGroup(string) slog.Handler      { return h }

type shippingProcessor struct{ shipOnce }

func (p shippingProcessor) OnEmit(ctx context.Context, _ *sdklog.Record) error {
	p.handle(ctx)
	return nil
}
func (shippingProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (shippingProcessor) Shutdown(context.Context) error                         { return nil }
func (shippingProcessor) ForceFlush(context.Context) error                       { return nil }

type lookingUpProcessor struct{ shipOnce }

func (p lookingUpProcessor) OnStart(ctx context.Context, _ sdktrace.ReadWriteSpan) { p.handle(ctx) }
func (lookingUpProcessor) OnEnd(sdktrace.ReadOnlySpan)                             {}
func (lookingUpProcessor) Shutdown(context.Context) error                          { return nil }
func (lookingUpProcessor) ForceFlush(context.Context) error                        { return nil }

// TestTelemetrysCallIsAnOperationOfItsOwn: the user's telemetry (a slog
// handler, a log processor, a span processor's OnStart), and a function
// handed the caller's request (a metric labeler, a span name formatter, a
// Budget's Key), that calls through the same Transport with the context it
// was handed makes an operation of its own: it takes none of the outer operation's id,
// Intent, attempt numbers or result slot.
func TestTelemetrysCallIsAnOperationOfItsOwn(t *testing.T) {
	var items atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items" && items.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, telemetry := range []string{"slog handler", "log processor", "span processor", "metric labeler", "span name formatter", "budget key",
		"attempt span name formatter", "attempt span name formatter, without client spans"} {
		t.Run(telemetry, func(t *testing.T) {
			items.Store(0)
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			var client *http.Client
			ship := shipOnce{done: new(atomic.Bool), ship: func(ctx context.Context) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/export", strings.NewReader("record"))
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}}
			rec := tracetest.NewSpanRecorder()
			processors := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(rec)}
			opts := []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}
			if telemetry != "budget key" {
				opts = append(opts, otelretry.WithoutBudget())
			}
			switch telemetry {
			case "slog handler":
				opts = append(opts, otelretry.WithLogger(slog.New(shippingHandler{ship})))
			case "log processor":
				opts = append(opts, otelretry.WithLoggerProvider(sdklog.NewLoggerProvider(sdklog.WithProcessor(shippingProcessor{ship}))))
			case "span processor":
				processors = append(processors, sdktrace.WithSpanProcessor(lookingUpProcessor{ship}))
			case "metric labeler": // the functions handed the caller's request, from the second call on
				opts = append(opts, otelretry.WithMetricAttributes(func(r *http.Request) []attribute.KeyValue {
					ship.handle(r.Context())
					return nil
				}))
			case "span name formatter":
				opts = append(opts, otelretry.WithSpanNameFormatter(func(r *http.Request) string {
					ship.handle(r.Context())
					return "retry " + r.Method
				}))
			case "attempt span name formatter", "attempt span name formatter, without client spans":
				opts = append(opts, otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string {
					ship.handle(r.Context())
					return r.Method
				}))
				if strings.HasSuffix(telemetry, "without client spans") {
					opts = append(opts, otelretry.WithoutClientSpans())
				}
			case "budget key":
				opts = append(opts, otelretry.WithBudget(&otelretry.Budget{Key: func(r *http.Request) string {
					ship.handle(r.Context())
					return r.URL.Host
				}}))
			}
			opts = append(opts, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(processors...)))
			client = &http.Client{Transport: otelretry.NewTransport(base, opts...)}

			var results otelretry.Results
			ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-outer"), &results)
			ctx = otelretry.WithIntent(ctx, otelretry.Intent{MaxAttempts: 2})
			resp, err := client.Do(get(t, ctx, srv.URL+"/items"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if !ship.done.Load() {
				t.Fatal("the telemetry shipped nothing")
			}
			if ops := results.Operations(); len(ops) != 1 || ops[0].OperationID != "op-outer" || ops[0].StatusCode != http.StatusOK {
				t.Errorf("the caller's result slot holds %+v, want the outer read alone", ops)
			}
			var outer []string
			for _, s := range spantest.Attempts(rec.Ended()) {
				id, path := attrOf(s, attrs.OperationIDKey).AsString(), attrOf(s, attrs.URLFullKey).AsString()
				switch {
				case strings.HasSuffix(path, "/items"):
					outer = append(outer, attrOf(s, attrs.RequestIDKey).AsString())
				case id == "op-outer":
					t.Errorf("the telemetry's call was recorded under the outer operation's id")
				}
			}
			slices.Sort(outer)
			if want := []string{"op-outer/attempt-1", "op-outer/attempt-2"}; !slices.Equal(outer, want) {
				t.Errorf("the outer attempts are %v, want %v", outer, want)
			}
		})
	}
}

// A hook's call built from the request it is handed is an operation of its
// own, also when that request is a later hop of a redirect chain: the
// copy carries Request.Response, the hop before's, and the lookup was
// taken for the chain's next hop, under the write's operation id, its
// deadline and its attempt numbers, the id and the slot the hook gave it
// ignored. A chain the hook's own call starts is still one.
func TestAHooksCallCopiedFromARedirectHopIsNotTheChainsNextHop(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch {
		case r.URL.Path == "/old":
			http.Redirect(w, r, "/orders", http.StatusPermanentRedirect)
		case r.URL.Path == "/lookup":
			http.Redirect(w, r, "/orders/9", http.StatusTemporaryRedirect)
		case r.Method == http.MethodPost:
			select { // processed, never answered: the attempt timeout cuts it
			case <-r.Context().Done():
			case <-stop:
			}
		default:
			io.WriteString(w, "not found")
		}
	}))
	defer srv.Close()
	defer close(stop)
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	var client *http.Client
	var lookup otelretry.Results
	check := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		ctx = otelretry.WithResults(otelretry.WithOperationID(ctx, "lookup-of-order-9"), &lookup)
		req := c.Request.Clone(ctx) // the write's method, URL and headers, and the hop's Response
		req.Method, req.URL.Path, req.Body = http.MethodGet, "/lookup", nil
		resp, err := client.Do(req)
		if err != nil {
			return otelretry.StateResult{}, err
		}
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	rec := tracetest.NewSpanRecorder()
	client = &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(5*time.Second),
		otelretry.WithoutBudget(), otelretry.WithStateCheck(check))}
	var caller otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "write-order-9"), &caller)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/old", strings.NewReader("order 9"))
	if _, err := client.Do(req); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want the write's outcome unknown", err)
	}
	ops := lookup.Operations()
	if len(ops) != 2 || ops[0].OperationID != "lookup-of-order-9" || ops[1].OperationID != "lookup-of-order-9" {
		t.Errorf("the lookup's slot holds %+v, want its two hops under lookup-of-order-9", ops)
	}
	for _, op := range caller.Operations() {
		if op.OperationID != "write-order-9" {
			t.Errorf("the caller's slot holds %+v, want the write's hops alone", op)
		}
	}
	hops := map[string]int64{} // an operation span's id and redirects -> count
	for _, s := range spantest.Operations(rec.Ended()) {
		redirects, _ := spantest.Attr(s, attrs.RedirectsKey)
		hops[attrOf(s, attrs.OperationIDKey).AsString()+" after "+redirects.Emit()]++
	}
	want := map[string]int64{"write-order-9 after ": 1, "write-order-9 after 1": 1,
		"lookup-of-order-9 after ": 1, "lookup-of-order-9 after 1": 1}
	if !maps.Equal(hops, want) {
		t.Errorf("operation spans by id and redirects before: %v, want %v", hops, want)
	}
}

// A state check's lookup built from StateCheck.Request is an operation of
// its own on the wire too: it went out with the write's operation id
// (WithOperationIDHeader) and "attempt 1" on each of its tries
// (WithAttemptHeader), headers otelretry had stamped on the write, so the
// server filed it under the write and saw its retry as a first attempt.
func TestALookupCopiedFromTheWriteSendsItsOwnIDAndAttemptHeaders(t *testing.T) {
	stop := make(chan struct{})
	var lookups []string // each lookup's id and attempt headers, as the server saw them
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/orders" {
			select { // processed, never answered: the attempt timeout cuts it
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		mu.Lock()
		lookups = append(lookups, r.Header.Get("X-Operation-Id")+" "+r.Header.Get("X-Envoy-Attempt-Count"))
		first := len(lookups) == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	defer close(stop)
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	var client *http.Client
	check := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		req := c.Request.Clone(otelretry.WithOperationID(ctx, "lookup-of-order-9"))
		req.Method, req.URL.Path = http.MethodGet, "/lookup"
		resp, err := client.Do(req)
		if err != nil {
			return otelretry.StateResult{}, err
		}
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithOperationIDHeader("X-Operation-Id"), otelretry.WithAttemptHeader("X-Envoy-Attempt-Count"),
		otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(5*time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithoutBudget(), otelretry.WithStateCheck(check))}
	ctx := otelretry.WithOperationID(t.Context(), "write-order-9")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader("order 9"))
	if _, err := client.Do(req); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want the write's outcome unknown", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"lookup-of-order-9 1", "lookup-of-order-9 2"}; !slices.Equal(lookups, want) {
		t.Errorf("the lookups went out with %q (id, attempt), want %q: the lookup's own", lookups, want)
	}
}

// A call tried twice by a loop of its own (an SDK's retryer), tied by an
// operation id or by a parent span around the tries: at the top level
// either ties them (the second try carries retry.operation.repeat = 1);
// inside a PrepareAttemptFunc's token fetch only the id the hook adds
// does, as docs/layers.md says (the spans of a hook's context are the
// operation's, which its other calls share: under a boundary no call
// counts the calls before it by their parent).
func TestAHooksRetriedCallIsTiedByTheOperationIDItAdds(t *testing.T) {
	for _, where := range []string{"top level", "in a PrepareAttemptFunc"} {
		for _, tie := range []string{"parent span", "WithOperationID"} {
			t.Run(where+", "+tie, func(t *testing.T) {
				var tokens atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.ReadAll(r.Body)
					if r.URL.Path == "/token" && tokens.Add(1) == 1 {
						w.WriteHeader(http.StatusInternalServerError)
						return
					}
					io.WriteString(w, "ok")
				}))
				defer srv.Close()
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				var client *http.Client
				loop := func(ctx context.Context) { // the hook's SDK: tries the POST until it gets a 2xx, twice at most
					if tie == "parent span" {
						c, s := tp.Tracer("hook").Start(ctx, "fetch token")
						defer s.End()
						ctx = c
					} else {
						ctx = otelretry.WithOperationID(ctx, "op-token")
					}
					for range 2 {
						req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/token", strings.NewReader("grant"))
						resp, err := client.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode < 300 {
							return
						}
					}
				}
				var fetched atomic.Bool
				opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithPropagators(propagation.TraceContext{}),
					otelretry.WithoutBudget()}
				if where != "top level" {
					opts = append(opts, otelretry.WithPrepareAttempt(func(req *http.Request, attempt int) error {
						if fetched.CompareAndSwap(false, true) {
							loop(req.Context())
						}
						return nil
					}))
				}
				client = &http.Client{Transport: otelretry.NewTransport(srv.Client().Transport.(*http.Transport).Clone(), opts...)}
				ctx, root := tp.Tracer("caller").Start(context.Background(), "handler")
				if where == "top level" {
					loop(ctx)
				} else {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/items", nil)
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				root.End()
				var repeats []int64
				for _, op := range spantest.Operations(rec.Ended()) {
					if !strings.HasSuffix(attrOf(op, attrs.URLFullKey).AsString(), "/token") {
						continue
					}
					v, _ := spantest.Attr(op, attrs.RepeatKey)
					repeats = append(repeats, v.AsInt64())
				}
				want := []int64{0, 1}
				if where != "top level" && tie == "parent span" {
					want = []int64{0, 0}
				}
				if !slices.Equal(repeats, want) {
					t.Errorf("retry.operation.repeat of the two POST /token tries = %v, want %v", repeats, want)
				}
			})
		}
	}
}
