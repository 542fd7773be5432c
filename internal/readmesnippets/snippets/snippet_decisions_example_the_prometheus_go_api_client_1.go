// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/decisions.md (section "Example: the Prometheus Go API client", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"github.com/otelretry/otelretry-go/otelretry"
	"github.com/prometheus/client_golang/api"
	"github.com/prometheus/client_golang/api/prometheus/v1"
	"net/http"
	"slices"
	"strings"
)

// readOnlyQueries marks the read-only requests the client sends as POST
// as safe to repeat, and leaves every other request alone.
type readOnlyQueries struct{ api.Client }

var prometheusReads = []string{"/api/v1/query", "/api/v1/query_range", "/api/v1/query_exemplars",
	"/api/v1/series", "/api/v1/labels", "/api/v1/format_query"}

func (c readOnlyQueries) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	if slices.ContainsFunc(prometheusReads, func(p string) bool { return strings.HasSuffix(req.URL.Path, p) }) {
		in := otelretry.CallIntent(ctx) // the caller's, kept
		in.Repeatable = true
		ctx = otelretry.WithIntent(ctx, in)
	}
	return c.Client.Do(ctx, req)
}

func snippetDecisionsExampleThePrometheusGoApiClient1() {
	client, _ := api.NewClient(api.Config{Address: "http://prometheus:9090", RoundTripper: otelretry.NewTransport(http.DefaultTransport)})
	promAPI := v1.NewAPI(readOnlyQueries{client})
	_ = client
	_ = promAPI
}
