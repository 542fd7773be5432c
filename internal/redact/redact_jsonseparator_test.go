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

// cutAuthority reads a URL without a scheme after an opening of a field,
// '<' among them ("=", "[", "(", "{", "<"), and the CHANGELOG's entry for
// afterSeparator is about a tool's output "quoted by %q or JSON". Go's
// encoding/json writes '<' as \u003c (HTML-safe escaping, its default),
// so the same text marshaled as JSON keeps the token that plain and %q
// lose: afterSeparator reads \u003c as ending in the letter 'c'.
func TestASchemelessTokenAfterAnAngleBracketJSONEscaped(t *testing.T) {
	const token = "TOKENSECRET"
	raw := "see <//" + token + "@registry.test/@scope/pkg>"
	js, err := json.Marshal(map[string]string{"stderr": raw})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{"plain": raw, "%q": fmt.Sprintf("%q", raw), "json": string(js)} {
		if out := redact.Text(in); strings.Contains(out, token) {
			t.Errorf("%s: Text(%s)\n = %s\n keeps the token", name, in, out)
		}
	}
}
