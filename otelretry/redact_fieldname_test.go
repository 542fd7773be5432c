// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The same as internal/redact's
// TestASchemelessURLAfterAFieldNameLosesItsUserinfo, end to end: a
// server's JSON message (slashes escaped, as PHP's json_encode writes
// them) naming a URL without a scheme after "url=" reaches Error() and
// the spans with its user name and password head, or its token.
func TestAnEscapedSchemelessURLInAnErrorReachesNoTelemetry(t *testing.T) {
	for _, body := range []string{
		`{"error":"cannot fetch url=\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x"}`,
		`{"error":"cannot fetch url=\/\/TOKENTOKEN1@h.test\/x"}`,
	} {
		msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1/orders", nil,
			failingWith(func(*http.Request) error { return fmt.Errorf("upstream said %s", body) }))
		for _, secret := range []string{"USERNAME", "PWHEAD", "TOKENTOKEN1"} {
			if strings.Contains(msg, secret) || strings.Contains(tel, secret) {
				t.Errorf("%q reached telemetry; Error() = %q", secret, msg)
			}
		}
	}
}
