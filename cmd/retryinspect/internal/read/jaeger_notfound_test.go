// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"os"
	"testing"
)

// An /api/v3 answer of several values, one of which reports no traces,
// keeps the other values' spans, in either order, as a saved answer does
// (a reviewer's find: a later not-found value threw away every span read
// before it, and the command said "no spans").
func TestANotFoundValueLeavesTheOtherValuesSpans(t *testing.T) {
	trace, err := os.ReadFile("testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	notFound, err := os.ReadFile("testdata/jaeger-not-found.json")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Jaeger(bytes.NewReader(trace), "alone", 0)
	if err != nil || len(alone) == 0 {
		t.Fatalf("the trace alone: %d spans, %v", len(alone), err)
	}
	for name, answer := range map[string][]byte{
		"trace then not found": append(append(bytes.TrimSpace(bytes.Clone(trace)), '\n'), notFound...),
		"not found then trace": append(append(bytes.TrimSpace(bytes.Clone(notFound)), '\n'), trace...),
	} {
		got, err := Jaeger(bytes.NewReader(answer), name, 0)
		if err != nil || len(got) != len(alone) {
			t.Errorf("Jaeger, %s: %d spans, %v; want the trace's %d", name, len(got), err, len(alone))
		}
		got, err = JaegerSaved(bytes.NewReader(answer), name, 0)
		if err != nil || len(got) != len(alone) {
			t.Errorf("JaegerSaved, %s: %d spans, %v; want the trace's %d", name, len(got), err, len(alone))
		}
	}
	none, err := Jaeger(bytes.NewReader(notFound), "none", 0)
	if err != nil || len(none) != 0 {
		t.Errorf("not found alone: %d spans, %v; want none and no error", len(none), err)
	}
}
