// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// TestRealJaeger sends crafted spans over OTLP/HTTP to a running stack and
// reads them back through the Jaeger query API: the report must equal the
// one made from the same spans written by stdouttrace. It runs only when
// OTELRETRY_OTLP_ENDPOINT and OTELRETRY_JAEGER_URL are set, as
// `scripts/stack.sh env` exports them.
func TestRealJaeger(t *testing.T) {
	otlpEndpoint, jaegerURL := os.Getenv("OTELRETRY_OTLP_ENDPOINT"), os.Getenv("OTELRETRY_JAEGER_URL")
	if otlpEndpoint == "" || jaegerURL == "" {
		t.Skip("set OTELRETRY_OTLP_ENDPOINT and OTELRETRY_JAEGER_URL (source the file `scripts/stack.sh env` prints) to run against a real Jaeger")
	}
	// A fresh service name and trace ids, so runs do not mix in a shared Jaeger.
	opts := tracefixture.Options{
		Service:     fmt.Sprintf("retryinspect-e2e-%d", time.Now().UnixNano()),
		TraceIDHigh: rand.Uint64() | 1,
		Base:        time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond),
	}
	var roots []tracefixture.Span
	for _, name := range []string{"clean", "unsafe-resend", "unredacted-url", "remaining-grows", "operation-id-split"} {
		roots = append(roots, caseNamed(t, name).roots...)
	}
	spans := opts.Record(roots...)

	var reference bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&reference))
	if err != nil {
		t.Fatal(err)
	}
	if err := tracefixture.Export(context.Background(), exp, spans); err != nil {
		t.Fatal(err)
	}
	_, want, _ := runOnFile(t, reference.Bytes())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	otlp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlpEndpoint+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tracefixture.Export(ctx, otlp, spans); err != nil {
		t.Fatal(err)
	}

	// The pipeline batches: poll until every span has arrived.
	args := []string{"-jaeger", jaegerURL, "-service", opts.Service, "-lookback", "1h", "-limit", "1000"}
	var got, stderr bytes.Buffer
	for deadline := time.Now().Add(30 * time.Second); ; {
		got.Reset()
		stderr.Reset()
		run(args, &got, &stderr)
		if got.String() == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got.String() != want {
		t.Errorf("report from Jaeger differs from the stdouttrace one (stderr %q)\n--- jaeger\n%s\n--- stdouttrace\n%s", stderr.String(), got.String(), want)
	}
}
