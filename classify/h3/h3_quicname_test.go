// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import "testing"

// End to end through quic-go's own server (which lowercases names and
// sends them as they are) and client. The secret is lower case, so that
// the server's lowercasing of a name does not hide it from the check.
func TestHTTP3NameFormsReachNoTelemetry(t *testing.T) {
	const secret = "supersecretsession0123456789"
	for _, tc := range []struct{ name, header, value string }{
		// the name holds `: "`: unquotedNameAndValue takes the name's own quote for the value
		{"name holds colon-quote", `x: "a"`, "sid=" + secret + "\x01"},
		// the existing case "name that holds a value" (Retry-After/SECRET, upper case) with a lower-case secret
		{"name that holds a value, lower case", "Retry-After/" + secret, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) { headerValueLeaks(t, secret, tc.header, tc.value) })
	}
}
