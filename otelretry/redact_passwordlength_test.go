// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The request's own password goes alone at any length (a single byte), and
// a target's from minCredentialPart (8) bytes, that length included
// (userinfoPartsAlone's godoc, docs/telemetry.md).
func TestAPasswordAloneIsRedactedFromItsLeastLength(t *testing.T) {
	for _, c := range []struct{ raw, pass string }{
		{"http://u:Q@p.test/x", "Q"},
		{"http://p.test/fetch/https://svc:Qx7kZp9w@internal.test/x", "Qx7kZp9w"},
	} {
		t.Run(c.pass, func(t *testing.T) {
			got := everyTelemetryText(t, c.raw, func(*http.Request) error {
				return fmt.Errorf("auth rejected [%s]", c.pass)
			})
			if strings.Contains(got, "["+c.pass+"]") {
				t.Errorf("the password %q alone reached telemetry:\n%s", c.pass, got)
			}
		})
	}
}
