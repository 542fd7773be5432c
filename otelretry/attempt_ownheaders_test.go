// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// writesHeaders is a propagator that writes a value of its own, new on
// every Inject, into each of names, whatever its Fields say.
type writesHeaders struct {
	names  []string
	fields []string
	n      *atomic.Int32
}

func (p writesHeaders) Inject(_ context.Context, c propagation.TextMapCarrier) {
	v := "prop-" + strconv.Itoa(int(p.n.Add(1)))
	for _, name := range p.names {
		c.Set(name, v)
	}
}

func (p writesHeaders) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}

func (p writesHeaders) Fields() []string { return p.fields }

// The headers otelretry adds to every attempt (the idempotency key, the
// operation's id) go out as otelretry set them, whatever a propagator
// writes: one whose Fields leave a header out (or a global set after
// NewTransport, whose Fields NewTransport could not read) wrote over the
// key on each attempt, so a keyed write retried after a 503 went out under
// a new "key" each time (a reviewer's find). In every sending mode.
func TestThePropagatorsCannotWriteOverAnAttemptsOwnHeaders(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			keys, ids := runOwnSpelling(t, mode, post(t, otelretry.WithOperationID(t.Context(), "op-9"), "http://api.test/orders", "x"))
			wantTheGeneratedKey(t, keys, ids)
		})
	}
}

// wireValues is every value h holds under name, in any spelling (net/http
// sends each key of the map as the map spells it).
func wireValues(h http.Header, name string) []string {
	var vs []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			vs = append(vs, v...)
		}
	}
	return vs
}

// runOwnSpelling sends one POST through three attempts (503, 503, 200) in
// mode, with a propagator that writes Idem-Key and X-Op (Fields leaving
// them out) and returns what each attempt carried under those names.
func runOwnSpelling(t *testing.T, mode string, req *http.Request, extra ...otelretry.Option) (keys, ids [][]string) {
	t.Helper()
	var mu sync.Mutex
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, wireValues(r.Header, "Idem-Key"))
		ids = append(ids, wireValues(r.Header, "X-Op"))
		code := http.StatusServiceUnavailable
		if len(keys) == 3 {
			code = http.StatusOK
		}
		return &http.Response{StatusCode: code, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})
	opts, b := sendingModeOptions(mode, sdktrace.NewTracerProvider(), base)
	opts = append(opts,
		otelretry.WithPropagators(writesHeaders{names: []string{"Idem-Key", "X-Op"}, fields: []string{"traceparent"}, n: new(atomic.Int32)}),
		otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "Idem-Key"}), otelretry.WithOperationIDHeader("X-Op"),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
	opts = append(opts, extra...)
	resp, err := otelretry.NewTransport(b, opts...).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	return keys, ids
}

// wantTheCallersOwn checks that every attempt carried the caller's key and
// id, as runOwnSpelling returns them.
func wantTheCallersOwn(t *testing.T, keys, ids [][]string) {
	t.Helper()
	for i := range keys {
		if len(keys[i]) != 1 || keys[i][0] != "caller-key" {
			t.Errorf("attempt %d sent idempotency key %q; want the caller's [caller-key]", i+1, keys[i])
		}
		if len(ids[i]) != 1 || ids[i][0] != "caller-op" {
			t.Errorf("attempt %d sent X-Op %q; want the caller's [caller-op]", i+1, ids[i])
		}
	}
}

// wantTheGeneratedKey checks that all three attempts carried one generated
// key and the operation's id, op-9, as runOwnSpelling returns them.
func wantTheGeneratedKey(t *testing.T, keys, ids [][]string) {
	t.Helper()
	if len(keys) != 3 {
		t.Fatalf("%d attempts sent; want 3", len(keys))
	}
	for i := range keys {
		if len(keys[i]) != 1 || len(keys[0]) != 1 || keys[i][0] != keys[0][0] || len(keys[i][0]) != 32 {
			t.Errorf("attempt %d sent idempotency key %q (first %q); want the one generated key on every attempt", i+1, keys[i], keys[0])
		}
		if len(ids[i]) != 1 || ids[i][0] != "op-9" {
			t.Errorf("attempt %d sent X-Op %q; want [op-9]", i+1, ids[i])
		}
	}
}

// A caller's own key and operation id header reach the wire on every
// attempt whatever the propagators write, in their canonical spelling and
// written into the map in lower case (net/http sends it as spelled;
// otelretry's stamp sees it as present and leaves the wire theirs).
// Reviewers' finds: the first fix kept only a key otelretry generated, and
// read the canonical spelling alone, so a lower-case header was lost.
func TestACallersOwnHeadersSurviveAPropagatorThatWritesThem(t *testing.T) {
	for spelling, set := range map[string]func(h http.Header){
		"canonical":  func(h http.Header) { h.Set("Idem-Key", "caller-key"); h.Set("X-Op", "caller-op") },
		"lower case": func(h http.Header) { h["idem-key"] = []string{"caller-key"}; h["x-op"] = []string{"caller-op"} },
	} {
		for _, mode := range sendingModes {
			t.Run(spelling+"/"+mode, func(t *testing.T) {
				req := post(t, otelretry.WithOperationID(t.Context(), "op-9"), "http://api.test/orders", "x")
				set(req.Header)
				keys, ids := runOwnSpelling(t, mode, req)
				wantTheCallersOwn(t, keys, ids)
			})
		}
	}
}

// A PrepareAttemptFunc may change headers; re-spelling the generated
// key's header with the same value is no change of the key
// (prepareChanged reads it in any spelling) and the attempt is sent; the
// key then goes out as it was (a reviewer's find: it went out on no
// attempt).
func TestAGeneratedKeyRespelledByPrepareSurvivesAPropagatorThatWritesIt(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			req := post(t, otelretry.WithOperationID(t.Context(), "op-9"), "http://api.test/orders", "x")
			respell := otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				for _, name := range []string{"Idem-Key", "X-Op"} {
					if v, ok := r.Header[name]; ok {
						delete(r.Header, name)
						r.Header[strings.ToLower(name)] = v
					}
				}
				return nil
			})
			keys, ids := runOwnSpelling(t, mode, req, respell)
			wantTheGeneratedKey(t, keys, ids)
		})
	}
}

// A propagator that writes a header holding keys which NewTransport could
// not refuse (its Fields leave it out, or a global propagator set after
// NewTransport) has its field kept off that header, and that is reported,
// once per Transport: the field was lost in silence (a reviewer's find).
func TestAPropagatorsFieldKeptOffAKeyHeaderIsReportedOnce(t *testing.T) {
	errs := captureOtelErrors(t)
	var mu sync.Mutex
	var keys []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("X-Trace-Ctx"))
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base,
		otelretry.WithPropagators(writesHeaders{names: []string{"x-trace-ctx"}, fields: []string{"traceparent"}, n: new(atomic.Int32)}),
		otelretry.WithIdempotencyKeyContract("X-Trace-Ctx"))
	if got := errs(); len(got) != 0 {
		t.Fatalf("NewTransport reported %v; want nothing (the propagator's Fields leave the header out)", got)
	}
	for i := range 3 {
		req := post(t, t.Context(), "http://api.test/orders", "x")
		req.Header.Set("X-Trace-Ctx", "key-"+strconv.Itoa(i))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(keys, ",") != "key-0,key-1,key-2" {
		t.Errorf("keys sent %q; want the callers'", keys)
	}
	if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), `a propagator wrote "x-trace-ctx", a header that holds idempotency keys`) {
		t.Errorf("reported %v; want one report of the field kept off", got)
	}
}
