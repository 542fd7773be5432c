// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/sdk-recipes.md (section "azcore v1.24 (every Azure SDK client)", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

// otelretryOwnsAzureRetries puts otelretry under an azcore pipeline, over
// base, reading the server's hint as azcore does, and turns azcore's
// retries off: MaxRetries -1, since 0 means its default (3 retries,
// whatever the method).
func otelretryOwnsAzureRetries(o *policy.ClientOptions, base http.RoundTripper, opts ...otelretry.Option) {
	// retry-after-ms, then x-ms-retry-after-ms, read as azcore reads them:
	// a whole number of milliseconds above 0; 0, a fraction or a negative
	// value is no hint, and the next header is read (Retry-After last, as
	// by default).
	opts = append([]otelretry.Option{
		otelretry.WithRetryHint("retry-after-ms", otelretry.HintWholeMilliseconds),
		otelretry.WithRetryHint("x-ms-retry-after-ms", otelretry.HintWholeMilliseconds),
	}, opts...)
	o.Transport = &http.Client{Transport: otelretry.NewTransport(base, opts...)}
	o.Retry.MaxRetries = -1
}

func newAzurePipeline() runtime.Pipeline {
	var o policy.ClientOptions // a client's options embed it: azblob.ClientOptions{ClientOptions: o}
	otelretryOwnsAzureRetries(&o, http.DefaultTransport)
	return runtime.NewPipeline("example", "v1.0.0", runtime.PipelineOptions{}, &o)
}
