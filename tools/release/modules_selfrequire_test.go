// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// checkRequirements: a published module requires only modules "before it
// in the published list". A module that requires itself is not before
// itself, and the go command does not refuse it (go list accepts a go.mod
// with require of its own path: it ignores the line), so the check is the
// only thing that catches it, in the development state (placeholder and a
// replace to its own directory, which the path check then passes) and in
// a release's.
func TestAModuleRequiringItselfIsRefused(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	for _, c := range []struct {
		name     string
		gomod    string
		released bool
	}{
		{"development", "module example.com/r/a\n\ngo 1.26.0\n\nrequire example.com/r/a " + placeholder +
			"\n\nreplace example.com/r/a " + placeholder + " => ./\n", false},
		{"release", "module example.com/r/a\n\ngo 1.26.0\n\nrequire example.com/r/a v0.3.0\n", true},
	} {
		self := parseMod(t, "a", c.gomod)
		errs := checkRequirements([]mod{root, self}, "v0.3.0", c.released)
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), "requires example.com/r/a, which is not before it")
		}
		if !found {
			t.Errorf("%s: a module requiring itself: errors %v, want it refused as not before itself", c.name, errs)
		}
	}
}
