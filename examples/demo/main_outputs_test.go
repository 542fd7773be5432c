// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// An output file the run cannot write is refused before the run plays: a
// -summary-json in a missing directory played the whole run and printed
// its report, then exited 1 (a reviewer's find).
func TestAnOutputFileThatCannotBeWrittenIsRefusedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		o    options
		flag string
	}{
		{options{repeat: 1, summaryJSON: filepath.Join(dir, "missing", "s.json")}, "-summary-json"},
		{options{repeat: 1, html: filepath.Join(dir, "missing", "r.html")}, "-html"},
		{options{repeat: 1, summaryJSON: dir}, "-summary-json"},
	} {
		cleanEnv(t, nil)
		var out bytes.Buffer
		err := run(t.Context(), c.o, &out)
		if err == nil || !strings.HasPrefix(err.Error(), c.flag+":") {
			t.Errorf("%+v: err %v; want one naming %s", c.o, err, c.flag)
		}
		if out.Len() != 0 {
			t.Errorf("%+v: the run played and printed %d bytes before the refusal", c.o, out.Len())
		}
	}
}
