// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// The base64-password fix (24f65c2) skips a pair whose value embeds a
// userinfo of its own: the target's own query holds a second target (a
// nested redirect). The key is then kept, and with it the first target's
// password up to its '='.
func TestABase64PasswordIsRedactedWhenTheValueEmbedsAnotherTarget(t *testing.T) {
	const pw = "c2VjcmV0cGFzcw"
	for _, raw := range []string{
		// escaped, '=' left as it is, the target's query names a second target with userinfo
		"http://proxy.test/go?https%3A%2F%2Fadmin%3A" + pw + "==%40internal.test%2Fcb%3Fnext%3Dhttps%3A%2F%2Fu%3Apw2%40h.test",
		// as url.PathEscape writes it
		"http://proxy.test/go?" + url.PathEscape("https://admin:"+pw+"==@internal.test/cb?next=https://u:pw2@h.test"),
	} {
		if out := redact.String(raw); strings.Contains(out, pw) {
			t.Errorf("String(%q)\n= %q keeps the password", raw, out)
		}
		if u, err := url.Parse(raw); err == nil {
			if out := redact.URL(u); strings.Contains(out, pw) {
				t.Errorf("URL(%q)\n= %q keeps the password", raw, out)
			}
		}
		in := `Get "` + raw + `": EOF`
		if out := redact.Text(in); strings.Contains(out, pw) {
			t.Errorf("Text(%q)\n= %q keeps the password", in, out)
		}
	}
}
