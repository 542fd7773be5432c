// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// docs/telemetry.md:287-288 ("Secrets"): "So are those of a target URL's
// userinfo in the path (read as a URL parser reads it), alone from 8 bytes
// each". url.full takes this target's userinfo for one (it is redacted
// there), but a '[' in its password, which a path carries as it is, makes
// net/url refuse the authority, so neither the password nor the 14-byte
// user name is taken out alone: both reach Error(), the span status and
// the log record.
func TestATargetWithABracketInItsPasswordLosesItsPartsAlone(t *testing.T) {
	const user = "svc-admin-user"
	for _, pass := range []string{"S3cret[Passw0rd]", "S3cretPassw0rd]", "[S3cretPassw0rd"} {
		raw := "http://p.test/fetch/https://" + user + ":" + pass + "@internal.test/x"
		for _, secret := range []string{pass, user} {
			got := everyTelemetryText(t, raw, func(*http.Request) error { return fmt.Errorf("auth failed for %s", secret) })
			if !strings.Contains(got, "REDACTED:REDACTED@internal.test") {
				t.Fatalf("url.full did not take %q for a userinfo:\n%s", raw, got)
			}
			if strings.Contains(got, secret) {
				t.Errorf("%q: %q reached telemetry:\n%s", raw, secret, got)
			}
		}
	}
}
