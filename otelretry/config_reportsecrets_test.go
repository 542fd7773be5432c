// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A value pasted into an option that takes names (a whole header line with
// its token, a URL with its password) is ignored and reported through
// otel.Handle; the report does not repeat the secret it carries
// (docs/telemetry.md "Secrets": every URL this library records is
// sanitized; credential header values are never recorded), and still
// names the value by its start (a reviewer's find: it was quoted whole).
func TestAnIgnoredNamesReportRepeatsNoSecret(t *testing.T) {
	const token = "sk_live_0123456789abcdefSECRET"
	const password = "hunter2hunter2PW"
	for _, c := range []struct {
		name   string
		opt    otelretry.Option
		secret string
		shown  string
	}{
		{"ShouldRetryHeaderLine", otelretry.WithShouldRetryHeaders("Authorization: Bearer " + token), token, `"Authorization:"… (52 bytes)`},
		{"ContractURL", otelretry.WithIdempotencyKeyContract("https://user:" + password + "@api.example.test/v1?token=" + token), password, `"https:"…`},
		{"AttemptHeaderLine", otelretry.WithAttemptHeader("Authorization: Bearer " + token), token, `"Authorization:"…`},
		{"MethodsURL", otelretry.WithIdempotentMethods("https://user:" + password + "@api.example.test/"), password, `"https:"…`},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := captureOtelErrors(t)
			otelretry.NewTransport(nil, c.opt)
			got := errs()
			if len(got) != 1 {
				t.Fatalf("reported %d times, want once: %v", len(got), got)
			}
			if strings.Contains(got[0].Error(), c.secret) {
				t.Errorf("the report repeats the secret %q: %q", c.secret, got[0].Error())
			}
			if !strings.Contains(got[0].Error(), c.shown) {
				t.Errorf("the report %q does not name the value by its start, %s", got[0].Error(), c.shown)
			}
		})
	}
}
