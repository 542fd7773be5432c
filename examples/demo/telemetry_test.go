// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/internal/silentport"
	"github.com/otelretry/otelretry-go/otelretry"
)

// twoFailuresThenOK answers 503, 503, 200 per operation (by the op query value).
func twoFailuresThenOK(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Query().Get("op")]++
		n := seen[r.URL.Query().Get("op")]
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// exportingProviders are the SDK's providers, exporting over OTLP or not at
// all.
type exportingProviders struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
	lp *sdklog.LoggerProvider
}

func (p exportingProviders) shutdown(ctx context.Context) {
	if p.tp != nil {
		p.tp.Shutdown(ctx)
	}
	if p.mp != nil {
		p.mp.Shutdown(ctx)
	}
	if p.lp != nil {
		p.lp.Shutdown(ctx)
	}
}

// exportTo builds providers that export traces, metrics and log records
// over OTLP (proto "http" or "grpc") to endpoint, with the batching
// processors; with proto "", providers that export nothing.
func exportTo(t *testing.T, proto, endpoint string) exportingProviders {
	t.Helper()
	ctx := context.Background()
	if proto == "" {
		return exportingProviders{tp: sdktrace.NewTracerProvider(), mp: sdkmetric.NewMeterProvider(), lp: sdklog.NewLoggerProvider()}
	}
	var se sdktrace.SpanExporter
	var me sdkmetric.Exporter
	var le sdklog.Exporter
	var err error
	switch proto {
	case "http":
		se, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
		if err == nil {
			me, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(endpoint), otlpmetrichttp.WithInsecure())
		}
		if err == nil {
			le, err = otlploghttp.New(ctx, otlploghttp.WithEndpoint(endpoint), otlploghttp.WithInsecure())
		}
	case "grpc":
		se, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
		if err == nil {
			me, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(endpoint), otlpmetricgrpc.WithInsecure())
		}
		if err == nil {
			le, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(endpoint), otlploggrpc.WithInsecure())
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	sp := sdktrace.NewBatchSpanProcessor(se, sdktrace.WithBatchTimeout(50*time.Millisecond))
	return exportingProviders{
		tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp)),
		mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(100*time.Millisecond)))),
		lp: sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(le, sdklog.WithExportInterval(50*time.Millisecond)))),
	}
}

var opSeq atomic.Int64

type outageRun struct {
	lat      []time.Duration // sorted
	outcomes map[string]int
}

// runOperations sends n GETs to url, parallel at a time, through a
// Transport on p, and returns their latencies and outcomes.
func runOperations(t *testing.T, p exportingProviders, url string, n, parallel int) outageRun {
	t.Helper()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base,
		otelretry.WithTracerProvider(p.tp), otelretry.WithMeterProvider(p.mp), otelretry.WithLoggerProvider(p.lp),
		otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)),
		otelretry.WithDeadline(2*time.Second))
	client := &http.Client{Transport: rt}
	var mu sync.Mutex
	r := outageRun{outcomes: map[string]int{}}
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var res otelretry.Results
			ctx := otelretry.WithResults(context.Background(), &res)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/x?op=%d-%d", url, i, opSeq.Add(1)), nil)
			start := time.Now()
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			d := time.Since(start)
			last, _ := res.Last()
			mu.Lock()
			r.lat = append(r.lat, d)
			r.outcomes[fmt.Sprintf("%s/%d", last.Outcome, last.Attempts)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r
}

// An unreachable Collector changes no request: OTLP exporters of traces,
// metrics and log records, over HTTP and gRPC, to a closed port and to one
// that accepts and never answers, with the batching processors (as the
// demo and docs/stack.md set them up). Every operation ends as it does
// with no exporter (returned after 3 attempts, within its 2 s deadline),
// and the providers shut down within their context's deadline. The
// latencies are logged, not judged: a loaded machine moves them.
func TestAnUnreachableCollectorChangesNoRequest(t *testing.T) {
	const n, parallel = 40, 4
	srv := twoFailuresThenOK(t)
	quiet := exportTo(t, "", "")
	baseline := runOperations(t, quiet, srv.URL, n, parallel)
	quiet.shutdown(context.Background())
	if want := map[string]int{"return/3": n}; fmt.Sprint(baseline.outcomes) != fmt.Sprint(want) {
		t.Fatalf("without exporters: outcomes %v, want %v", baseline.outcomes, want)
	}
	closed, silent := closedPort(t), silentport.Listen(t)
	for _, c := range []struct{ proto, name, endpoint string }{
		{"http", "closed", closed}, {"http", "silent", silent},
		{"grpc", "closed", closed}, {"grpc", "silent", silent},
	} {
		t.Run(c.proto+"-"+c.name, func(t *testing.T) {
			p := exportTo(t, c.proto, c.endpoint)
			r := runOperations(t, p, srv.URL, n, parallel)
			if fmt.Sprint(r.outcomes) != fmt.Sprint(baseline.outcomes) {
				t.Errorf("outcomes %v, want %v as without exporters", r.outcomes, baseline.outcomes)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			p.shutdown(ctx)
			t.Logf("latency p50 %v, max %v (without exporters %v, %v); shutdown %v",
				r.lat[n/2], r.lat[n-1], baseline.lat[n/2], baseline.lat[n-1], time.Since(start).Round(time.Millisecond))
		})
	}
}
