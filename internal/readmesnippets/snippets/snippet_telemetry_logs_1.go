// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/telemetry.md (section "Logs", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"go.opentelemetry.io/otel/log/global"
	"net/http"
)

func snippetTelemetryLogs1() {
	// at start-up: global.SetLoggerProvider(provider), next to the tracer and meter providers
	rt := otelretry.NewTransport(http.DefaultTransport, otelretry.WithLoggerProvider(global.GetLoggerProvider()))
	_ = rt
}
