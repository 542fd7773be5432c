// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command consumer stands for a module outside this repository that
// depends on a release: scripts/release-test.sh builds it in a fresh module
// against the tagged root and both protocol classifiers, served by a
// file-system module proxy. It retries a 503 once through the transport,
// writes the spans as stdouttrace JSON to the file named by its argument
// (for the released retryinspect to read back), and prints what it got.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: consumer SPANS.json")
	}
	if err := run(os.Args[1]); err != nil {
		log.Fatal(err)
	}
}

func run(spans string) error {
	f, err := os.Create(spans)
	if err != nil {
		return err
	}
	defer f.Close()
	exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))

	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithTracerProvider(tp),
		otelretry.WithClassifier(h2.Classify, h3.Classify))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		return err
	}
	fmt.Printf("otelretry %s: %s %q after %d attempts\n", otelretry.Version, resp.Status, body, calls.Load())
	return f.Close()
}
