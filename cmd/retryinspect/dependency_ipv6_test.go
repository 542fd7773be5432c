// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
)

// TestAnIPv6DependencyIsNamedAsTheTransportKeysIt: docs/budget.md,
// "A dependency, on every page and in retryinspect, is what the budget is
// kept per: the request's host as its URL writes it". The transport keeps
// https://[::1]/x under "[::1]" (otelretry's
// TestHostOfDropsTheSchemesDefaultPort: "https://[::1]:443/x": "[::1]");
// retryinspect, on the library's own trace of that GET, must name it so.
func TestAnIPv6DependencyIsNamedAsTheTransportKeysIt(t *testing.T) {
	for _, target := range []string{"https://[::1]/x", "http://[::1]/x"} {
		r := analyzeWith(t, libraryTraceOfGET(t, target), read.Stdout)
		if len(r.Operations) != 1 {
			t.Fatalf("%s: %d operations read, want 1", target, len(r.Operations))
		}
		if got := r.Operations[0].Dependency; got != "[::1]" {
			t.Errorf("%s: retryinspect names the dependency %q; the transport keeps it as %q", target, got, "[::1]")
		}
	}
}
