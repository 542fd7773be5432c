// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from README.md (section "otelretry", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"net/http"
)

func snippetOtelretry1() {
	// Once: the W3C trace context, which otelretry and otelhttp inject through the global propagator.
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	client := &http.Client{Transport: otelretry.NewTransport(nil)} // nil wraps http.DefaultTransport
	_ = client
}
