// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// boundaryTexts is telemetryTextOf a GET of raw with headers h over a base
// that fails with msg (fmt's %s of it, wrapping io.EOF).
func boundaryTexts(t *testing.T, raw string, h http.Header, msg string) string {
	t.Helper()
	return telemetryTextOf(t, raw, h, func(*http.Request) error { return fmt.Errorf("%s: %w", msg, io.EOF) })
}

// The secrets of a request at exactly the length from which the docs say
// they are replaced alone (minCredentialPart, 8 bytes, for a user name, a
// fragment and a query or fragment value; minWholeValue, 4 bytes, for a
// credential header's whole value), and a credential header's parts split
// at ';' or unquoted: an error that repeats one alone, in prose, keeps
// none of them, and keeps its cause.
func TestSecretsAtTheirLengthBoundaryReachNoTelemetry(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		h         http.Header
		secret    string
	}{
		// redact.go spelledSecrets: "A user name alone from minCredentialPart bytes".
		{name: "userNameOf8", raw: "https://svcacct8:pw@api.test/v1", secret: "svcacct8"},
		// "the fragment ... of minCredentialPart bytes or more alone".
		{name: "fragmentOf8", raw: "https://api.test/v1#FRAG8x9z", secret: "FRAG8x9z"},
		// "each value of either": a query-style value inside the fragment.
		{name: "fragmentValue", raw: "https://api.test/cb#access_token=FRAGTOKEN12345&state=s", secret: "FRAGTOKEN12345"},
		// credentialSecrets: every value whole from minWholeValue bytes.
		{name: "wholeValueOf4", raw: "https://api.test/v1", h: http.Header{"X-Api-Key": {"k7Qz"}}, secret: "k7Qz"},
		// "each of its parts between spaces, commas, semicolons and '='".
		{name: "cookiePartAfterSemicolon", raw: "https://api.test/v1", h: http.Header{"Cookie": {"a=COOKIEVAL9876;b=2"}}, secret: "COOKIEVAL9876"},
		// "(a quoted one with its quotes and without)".
		{name: "digestResponseUnquoted", raw: "https://api.test/v1",
			h:      http.Header{"Authorization": {`Digest username="bob", response="6629fae49393a05397450978507c4ef1"`}},
			secret: "6629fae49393a05397450978507c4ef1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := boundaryTexts(t, c.raw, c.h, "upstream rejected "+c.secret+" for this call")
			if strings.Contains(got, c.secret) {
				t.Errorf("%q reached telemetry:\n%s", c.secret, got)
			}
			if !strings.Contains(got, "upstream rejected") {
				t.Errorf("the cause was lost:\n%s", got)
			}
		})
	}
}
