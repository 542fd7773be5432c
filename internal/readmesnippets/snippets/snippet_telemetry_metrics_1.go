// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/telemetry.md (section "Metrics", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// an option of sdkmetric.NewMeterProvider
var withoutOtelhttpHosts = sdkmetric.WithView(sdkmetric.NewView(
	sdkmetric.Instrument{Scope: instrumentation.Scope{Name: otelhttp.ScopeName}},
	sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("server.address", "server.port")},
))
