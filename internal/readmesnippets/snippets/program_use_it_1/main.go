// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from README.md (section "Use it", snippet 1) by readmesnippets; DO NOT EDIT.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

var target = "http://127.0.0.1:8080/orders" // your service

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	// The spans as stdouttrace JSON, which retryinspect reads back.
	out, err := os.Create("spans.json")
	if err != nil {
		return err
	}
	defer out.Close()
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
	defer tp.Shutdown(context.Background()) // flushes the spans
	// The W3C trace context on the wire, as otelhttp needs it too.
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithTracerProvider(tp),
		otelretry.WithDeadline(2*time.Second))}

	// The id to look the write up by; a slot no layer above can rewrite.
	ctx := otelretry.WithOperationID(context.Background(), "order-42")
	var results otelretry.Results
	ctx = otelretry.WithResults(ctx, &results)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err == nil { // in every case: with keys, a last answer may leave the outcome unknown
		defer resp.Body.Close()
	}
	var oe *otelretry.Error
	switch {
	case errors.Is(err, otelretry.ErrOutcomeUnknown), results.OutcomeUnknown():
		// Sent, never answered, maybe applied: look it up by id, never resend.
		last, _ := results.Last()
		fmt.Println("outcome unknown, not resent: reconcile", last.OperationID)
	case errors.As(err, &oe):
		fmt.Printf("gave up: %s (%s) after %d attempts\n", oe.Outcome, oe.Reason, oe.Attempts)
	case err != nil:
		return err
	default:
		body, _ := io.ReadAll(resp.Body)
		// Any status: after the last attempt, a 503 is the server's own answer.
		last, _ := results.Last()
		fmt.Printf("%s after %d attempts (%s): %s\n", resp.Status, last.Attempts, last.Outcome, body)
	}
	return nil
}
