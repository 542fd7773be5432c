// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/metrics"
)

// NewLabels is handed the caller's labels (a labeler's fixed slice, passed
// with kv...): it builds its Set without reordering or overwriting them
// (a reviewer's find: attribute.NewSetWithFiltered sorted and filtered
// them in place).
func TestNewLabelsLeavesTheCallersSliceAlone(t *testing.T) {
	labels := []attribute.KeyValue{
		attribute.String("tier", "gold"),
		attribute.String("url.full", "http://api.test/?token=s"), // dropped
		attribute.String("dependency", "billing"),
	}
	want := slices.Clone(labels)
	set := metrics.NewLabels(labels...)
	if set.Len() != 2 {
		t.Fatalf("set has %d labels, want 2", set.Len())
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("NewLabels rewrote the caller's slice:\n got  %v\n want %v", labels, want)
	}
}
