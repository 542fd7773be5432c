// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The CHANGELOG's [Unreleased] Fixed entry: a URL without a scheme in a
// tool's output "quoted by %q or JSON" has its userinfo redacted, read
// after an opening of a field ('=', '[', '(', '{', '<'), a list's
// separator or an escaped line break. encoding/json writes '<' as \u003c,
// so the JSON form of "<//TOKEN@host>" keeps the token in Error(), the
// attempt span's status and the log record, while %q's form loses it.
func TestASchemelessTokenAfterAJSONEscapedAngleBracketIsRedacted(t *testing.T) {
	const token = "ghp_REVIEWTOKEN0123456789"
	stderr := "fatal: could not read from <//" + token + "@github.com/o/r.git>\n"
	for name, mk := range map[string]func() error{
		"%q": func() error { return fmt.Errorf("credential helper: exit status 128: %q", stderr) },
		"json": func() error {
			js, _ := json.Marshal(map[string]string{"stderr": stderr})
			return fmt.Errorf("credential helper: exit status 128: %s", js)
		},
	} {
		t.Run(name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
				failingWith(func(*http.Request) error { return mk() }))
			if strings.Contains(msg, token) {
				t.Errorf("Error() keeps the token: %s", msg)
			}
			if strings.Contains(tel, token) {
				t.Errorf("telemetry keeps the token:\n%s", tel)
			}
		})
	}
}
