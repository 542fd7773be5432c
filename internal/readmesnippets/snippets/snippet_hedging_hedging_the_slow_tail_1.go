// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/hedging.md (section "Hedging: the slow tail", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

func snippetHedgingHedgingTheSlowTail1() {
	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithHedging(otelretry.Hedging{Adaptive: true}))}
	_ = client
}
