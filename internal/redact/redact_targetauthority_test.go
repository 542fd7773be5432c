// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A target whose password holds an escaped '?' is read as sent wherever it
// stands: followed by a second target without a userinfo (every target's
// authority is read, not the last one's alone), and at the path's end with
// no '/' after its host (the authority runs to the end).
func TestATargetWithAnEscapedMarkIsRedactedWhereverItStands(t *testing.T) {
	for _, raw := range []string{
		"http://p.test/fetch/https://svc-admin-user:S3cret%3Fk=v1@internal.test/x/https://other.test/y",
		"http://p.test/fetch/https://svc-admin-user:S3cret%3Fk=v1@internal.test",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := redact.URL(u); strings.Contains(got, "svc-admin-user") || strings.Contains(got, "S3cret") {
			t.Errorf("URL(%q) = %q: the target's userinfo is kept", raw, got)
		}
	}
}
