// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/layers.md (section "A client that uses otelhttp already", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"net/http"
)

func snippetLayersAClientThatUsesOtelhttpAlready1() {
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Was: &http.Client{Transport: otelhttp.NewTransport(base)}
	client := &http.Client{Transport: otelretry.NewTransport(otelhttp.NewTransport(base))}
	defer base.CloseIdleConnections() // client.CloseIdleConnections stops at otelhttp's
	_ = base
	_ = client
}
