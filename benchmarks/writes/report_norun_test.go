// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

// A run with no write at all: the duplicates target is judged over no
// write as the other two are not ("a target over no writes is neither met
// nor missed", judgedText), and each configuration's machine-readable
// line printed requests_per_write=NaN (0/0): a reviewer's find. The
// targets read "not judged" and the figure "none".
func TestARunWithNoWriteJudgesNoTarget(t *testing.T) {
	var out bytes.Buffer
	report(&out, []result{{config: keyed}, {config: unkeyed}})
	s := out.String()
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "duplicates:") && !strings.HasSuffix(line, "not judged (no such write)") {
			t.Errorf("no write in the run, yet %q:\n%s", line, s)
		}
		if strings.HasPrefix(line, "writes config=") && !strings.HasSuffix(line, "requests_per_write=none") {
			t.Errorf("no write, a figure that is no number: %q", line)
		}
	}
}
