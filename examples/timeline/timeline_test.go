// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"testing/synctest"
)

var update = flag.Bool("update", false, "rewrite testdata/timeline.golden")

// TestTimeline runs the timeline on virtual time and compares the table
// with the golden file to the byte: the same inputs give the same events on
// every run.
func TestTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := run(t.Context(), &out); err != nil {
			t.Fatal(err)
		}
		const golden = "testdata/timeline.golden"
		if *update {
			if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("timeline differs from %s:\n%s\nwant:\n%s", golden, out.Bytes(), want)
		}
		t.Logf("\n%s", out.Bytes())
	})
}
