// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"strings"
	"testing"
)

// TestAReleaseRepeatedBelowItselfIsRefused: each release is older than
// the one above it; the same version twice is refused.
func TestAReleaseRepeatedBelowItselfIsRefused(t *testing.T) {
	src := "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2024-02-01\n\n- b\n\n## [0.2.0] - 2024-01-01\n\n- a\n"
	if _, err := parseChangelog(bufio.NewScanner(strings.NewReader(src))); err == nil || !strings.Contains(err.Error(), "not older") {
		t.Fatalf("err %v: want not older than 0.2.0", err)
	}
}
