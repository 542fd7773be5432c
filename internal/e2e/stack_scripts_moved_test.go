// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// The script's header: "down  stop whatever `up` started (always exits
// 0; safe in a trap)", with one run directory "per checkout". A checkout
// moved (renamed) after `up` is still that checkout: its `down` stops the
// stack its `up` started (the run directory is named after the physical
// path at `up` time, so `down` stops the stacks of checkouts gone since
// theirs; a reviewer's find: it left this one running).
func TestStackDownAfterTheCheckoutMovedStopsTheStack(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	checkout := stackCheckout(t)
	pids := s.up(t, checkout)
	moved := filepath.Join(t.TempDir(), "otelretry-go-moved")
	if err := os.Rename(checkout, moved); err != nil {
		t.Fatal(err)
	}
	// pids are stopped when the test ends (pidsIn).
	out, err := s.stack(t, moved, "down")
	if err != nil {
		t.Fatalf("down from the moved checkout: %v\n%s", err, out)
	}
	if alive := aliveOnes(pids); len(alive) > 0 {
		t.Errorf("`scripts/stack.sh down` of the moved checkout left its stack running: %v\noutput:\n%s", alive, out)
	}
}
