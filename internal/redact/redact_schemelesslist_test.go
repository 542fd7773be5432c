// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A list of URLs without a scheme, one a line, quoted by %q or JSON (a
// tool's mirrors): the userinfo of every URL after an escaped line break
// is redacted, not only the first's, since no URL holds an escaped line
// break as written. A list joined by ',' or ';' keeps the later ones'
// (a URL's path holds those, and "https://h/a,//alice@example.com" is
// recorded as sent: docs/telemetry.md's limits).
func TestASecondURLWithoutASchemeInAListLosesItsUserinfo(t *testing.T) {
	const tok = "ghp_TOKEN0123456789"
	lines := "//mirror.test/o/r.git\n//" + tok + "@github.com/o/r.git"
	js, _ := json.Marshal(map[string]string{"mirrors": lines})
	for _, text := range []string{
		fmt.Sprintf("clone failed: %q", lines),
		string(js),
		`{"mirrors":"//mirror.test/o/r.git\u000a//` + tok + `@github.com/o/r.git"}`,
	} {
		if got := redact.Text(text); strings.Contains(got, tok) {
			t.Errorf("Text keeps the token:\n in  %s\n out %s", text, got)
		}
	}
}
