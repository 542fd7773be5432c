// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each attempt has its own header map in every sending mode: a base that
// sets a header never writes through to the caller's request.
func TestAttemptHeaderIsItsOwn(t *testing.T) {
	modes := map[string][]otelretry.Option{
		"client spans":         nil,
		"without client spans": {otelretry.WithoutClientSpans()},
		"no-op providers":      {otelretry.WithoutClientSpans(), otelretry.WithTracerProvider(nil)},
	}
	for name, opts := range modes {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r.Header.Set("X-Set-By-Base", "yes")
				return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, opts...)
			req := get(t, t.Context(), "http://api.test/items")
			req.Header.Set("Accept", "application/json")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := req.Header.Get("X-Set-By-Base"); got != "" {
				t.Errorf("the base's header reached the caller's request")
			}
		})
	}
}

// retry.deadline_ms is never negative, also for an operation that starts
// after its context's deadline.
func TestDeadlineMsNeverNegative(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-50*time.Millisecond))
	defer cancel()
	if _, err := tr.RoundTrip(get(t, ctx, "http://api.test/items")); err == nil {
		t.Fatal("want an error")
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if v := attrOf(op, attrs.DeadlineMsKey).AsInt64(); v < 0 {
			t.Errorf("retry.deadline_ms = %d", v)
		}
	}
}

// trailerBody is a request body that sets its request's trailer when it
// reaches EOF, as a body computing a checksum while it streams does.
type trailerBody struct {
	r       io.Reader
	trailer http.Header // the caller's Request.Trailer
	value   string
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.trailer.Set("X-Checksum", b.value)
	}
	return n, err
}

func (*trailerBody) Close() error { return nil }

// The trailers the caller's body sets while it is read reach the wire, in
// every sending mode, with and without a PrepareFunc, on the first attempt
// and on a retry (GetBody's body sets them again): net/http writes the
// sent request's Trailer map after the body's EOF, so the request that
// reaches the base holds the caller's map. A PrepareFunc that changes the
// trailers has its own map sent, and the caller's map is not written.
func TestTrailersTheBodySetsReachTheWire(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the trailer comes after the body
		mu.Lock()
		got = append(got, r.Trailer.Get("X-Checksum"))
		n := len(got)
		mu.Unlock()
		if r.Header.Get("X-Fail-First") == "1" && n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tp := sdktrace.NewTracerProvider()
	noopTracer, noopMeter := tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()
	modes := map[string][]otelretry.Option{
		"through otelhttp": {otelretry.WithTracerProvider(tp)},
		"own span":         {otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans()},
		"inject only":      {otelretry.WithTracerProvider(noopTracer), otelretry.WithMeterProvider(noopMeter)},
		"plain":            {otelretry.WithTracerProvider(noopTracer), otelretry.WithoutClientSpans()},
	}
	prepares := map[string]struct {
		f    otelretry.PrepareFunc
		want func(attempt int) string
	}{
		"no PrepareFunc": {nil, func(n int) string { return fmt.Sprintf("sum-%d", n) }},
		"PrepareFunc":    {func(r *http.Request, _ int) error { r.Header.Set("X-Signed", "1"); return nil }, func(n int) string { return fmt.Sprintf("sum-%d", n) }},
		"PrepareFunc setting the trailer": {func(r *http.Request, _ int) error { r.Trailer.Set("X-Checksum", "prepared"); return nil },
			func(int) string { return "prepared" }},
	}
	for mode, opts := range modes {
		for name, p := range prepares {
			for _, retry := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/retry=%v", mode, name, retry), func(t *testing.T) {
					mu.Lock()
					got = nil
					mu.Unlock()
					opts := append([]otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPut),
						otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, opts...)
					if p.f != nil {
						opts = append(opts, otelretry.WithPrepareAttempt(p.f))
					}
					req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Trailer = http.Header{"X-Checksum": nil} // declared; the body sets it
					bodies := 0
					req.GetBody = func() (io.ReadCloser, error) {
						bodies++
						return &trailerBody{r: strings.NewReader("payload"), trailer: req.Trailer, value: fmt.Sprintf("sum-%d", bodies)}, nil
					}
					req.Body, _ = req.GetBody()
					if retry {
						req.Header.Set("X-Fail-First", "1")
					}
					resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					var want []string
					for n := 1; n <= 1+btoi(retry); n++ {
						want = append(want, p.want(n))
					}
					mu.Lock()
					defer mu.Unlock()
					if !slices.Equal(got, want) {
						t.Errorf("the server received trailers %q, want %q", got, want)
					}
				})
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
