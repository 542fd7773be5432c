// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// TestMaxFindingsListsThatMany.
func TestMaxFindingsListsThatMany(t *testing.T) {
	r := &inspect.Report{}
	for range 3 {
		r.Findings = append(r.Findings, inspect.Finding{Code: inspect.Codes()[0]})
	}
	p := buildPage(r, HTMLOptions{MaxOperations: 1, MaxFindings: 2})
	if len(p.Findings) != 2 || p.FindingsLeftOut != 1 {
		t.Fatalf("%d listed, %d left out: want 2, 1", len(p.Findings), p.FindingsLeftOut)
	}
}
