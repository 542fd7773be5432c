// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import "testing"

// RELEASING.md: a removed package is recorded by its import path, or by
// its directory of two elements or more in an entry that writes nothing
// else in code; a top-level package's bare directory (`attrs`, a word
// that names much else) does not record it (a reviewer's find: the page
// said any directory did).
func TestARemovedPackageIsRecordedByItsPathOrALongerDirectory(t *testing.T) {
	for _, c := range []struct {
		entry, pkg string
		recorded   bool
	}{
		{"`attrs`: the package is gone.", "attrs", false},
		{"`" + libraryModule + "/attrs`: the package is gone.", "attrs", true},
		{"`internal/x/y`: the package is gone.", "internal/x/y", true},
	} {
		log := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n- "+c.entry+"\n\n## [0.3.0] - 2026-12-02\n")
		msg := "package " + libraryModule + "/" + c.pkg + ": removed"
		if got := log.breakNamed("0.3.0", libraryModule, msg); got != c.recorded {
			t.Errorf("%q records %q: %v, want %v", c.entry, msg, got, c.recorded)
		}
	}
}
