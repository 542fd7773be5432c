// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/layers.md (section "Stacking retry layers", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/hashicorp/go-retryablehttp"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

func snippetLayersStackingRetryLayers1() {
	client := retryablehttp.NewClient()
	client.HTTPClient = &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport)}
	client.RetryMax = 0
	client.ErrorHandler = retryablehttp.PassthroughErrorHandler // hand the last response over, as otelretry does
	_ = client
}
