// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"testing"
)

// TestSmoke runs the whole benchmark in smoke mode and checks its
// structure and the targets that hold whatever the timing: every write is
// accounted for, once and only once; neither otelretry configuration
// applies a write twice; with keys, every write it ended with a resend
// still allowed was applied once and answered a success, and no request
// was sent beyond the resends its lost answers needed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every configuration, a few seconds in all")
	}
	o := defaultOptions()
	o.smoke()
	var out bytes.Buffer
	results, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(results) != len(configNames) {
		t.Fatalf("%d results, want %d", len(results), len(configNames))
	}
	for _, r := range results {
		c := tallyOf(r)
		if c.once+c.dup+c.never != o.writes || c.success+c.failed+c.unknown != o.writes || r.stray != 0 {
			t.Errorf("%s: applied %d+%d+%d, told %d+%d+%d, %d stray; want %d writes each way", r.config,
				c.once, c.dup, c.never, c.success, c.failed, c.unknown, r.stray, o.writes)
		}
		switch r.config {
		case "plain":
			if c.requests != o.writes {
				t.Errorf("plain: %d requests for %d writes", c.requests, o.writes)
			}
		case unkeyed, keyed:
			if c.dup != 0 {
				t.Errorf("%s: %d writes applied twice", r.config, c.dup)
			}
		}
	}
	g, ok := targetsOf(results)
	if !ok || g.duplicates != 0 || g.done != g.resendable || !g.requestsMet() || g.compared == 0 {
		t.Errorf("targets %+v", g)
	}
}
