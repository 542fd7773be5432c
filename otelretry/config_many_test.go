// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// 10,000 distinct bad option values are each reported once, in one
// report, at a cost linear in them: the bytes NewTransport allocates (a
// count, unlike time) stay within a linear bound. The first fix of "a bad
// value given twice" joined the whole list again for each complaint: about
// 1.6 GB for 10,000 (a reviewer's find).
func TestTenThousandBadOptionsAreReportedAtALinearCost(t *testing.T) {
	reported := captureOtelErrors(t)
	const n = 10000
	opts := make([]otelretry.Option, 0, n)
	for i := range n {
		opts = append(opts, otelretry.WithMaxAttempts(-1-i))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	otelretry.NewTransport(scripted.New(), opts...)
	runtime.ReadMemStats(&after)
	errs := reported()
	if len(errs) != 1 {
		t.Fatalf("reported %d times, want once", len(errs))
	}
	if got := strings.Count(errs[0].Error(), "WithMaxAttempts("); got != n {
		t.Errorf("the report names %d options, want %d", got, n)
	}
	// A linear report needs a few MB (each complaint's message, ~100 B, a
	// few times over); 64 MB leaves ample room.
	if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 64 {
		t.Errorf("NewTransport with %d bad options allocated %d MB, want at most 64 (quadratic in the complaints)", n, mb)
	}
}
