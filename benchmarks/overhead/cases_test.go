// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"testing"
)

// TestCases runs every case a few times outside the benchmark loop: each
// operation must end with a read 200 after the expected number of base
// calls, and otelretry-sdk must end its operation span and one CLIENT span
// per attempt.
// No timing is checked.
func TestCases(t *testing.T) {
	const ops = 3
	for _, k := range operationKinds {
		for _, c := range cases {
			if k.kind == retrying && c.noRetry {
				continue
			}
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				base := newMemTransport(k.statuses...)
				bc := c.build(t, base, "http://api.example.test/v1/items?id=42", k.kind)
				for range ops {
					if err := bc.op(); err != nil {
						t.Fatal(err)
					}
				}
				if got, want := base.calls.Load(), int64(ops*len(k.statuses)); got != want {
					t.Errorf("base calls = %d, want %d", got, want)
				}
				if c.name == "otelretry-sdk" {
					// operation span + (attempt span + client span) per attempt
					if got, want := bc.spans.ended.Load(), int64(ops*(1+len(k.statuses))); got != want {
						t.Errorf("spans ended = %d, want %d", got, want)
					}
				}
			})
		}
	}
}

// TestLoopback checks that every case reaches the loopback server.
func TestLoopback(t *testing.T) {
	srv := newLoopbackServer()
	defer srv.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := newLoopbackTransport()
			defer base.CloseIdleConnections()
			bc := c.build(t, base, srv.URL+"/v1/items?id=42", success)
			for range 3 {
				if err := bc.op(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
