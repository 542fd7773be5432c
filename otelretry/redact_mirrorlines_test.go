// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A base that quotes a tool's output listing URLs without a scheme, one a
// line after a field's name ("MIRROR_B=//tok@h", an env dump or a config
// listing), keeps the second line's userinfo in Error(), the span status
// and the log record, though the same line first is redacted
// (docs/telemetry.md: another URL an error names is sanitized where it is
// written as a URL; CHANGELOG [Unreleased]: a URL without a scheme is read
// after an escaped line break wherever it comes).
func TestASchemelessURLAfterAFieldOnALaterLineReachesNoTelemetry(t *testing.T) {
	const tok = "ghp_TOKEN0123456789"
	lines := "MIRROR_A=//mirror.test/o/r.git\nMIRROR_B=//" + tok + "@github.com/o/r.git"
	js, _ := json.Marshal(map[string]string{"env": lines})
	for name, text := range map[string]string{
		"%q":   fmt.Sprintf("git fetch failed: %q", lines),
		"json": "git fetch failed: " + string(js),
	} {
		t.Run(name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
				failingWith(func(*http.Request) error { return errors.New(text) }))
			if strings.Contains(msg, tok) {
				t.Errorf("Error() keeps the token: %s", msg)
			}
			if strings.Contains(tel, tok) {
				t.Errorf("telemetry keeps the token (%d times)", strings.Count(tel, tok))
			}
		})
	}
}
