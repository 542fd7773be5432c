// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// net/url refuses a URL holding a control character, and its error quotes
// the URL with %q: `parse "https://h/cb?token=abc def\tghi": net/url:
// invalid control character in URL`. Text reads the quoted URL to its
// closing quote, whatever it holds (its doc), so every query value and
// the userinfo are redacted, tab, CR or LF inside them included; a
// password's too in that error wrapped in JSON. (A query value holding a
// space, in that error wrapped in JSON, keeps its words after the space:
// the limit docs/telemetry.md gives for a space in a value.)
func TestNetURLControlCharacterErrorKeepsNoSecret(t *testing.T) {
	for _, c := range []struct{ raw, secret string }{
		{"https://h.test/cb?token=abc def\tSECRETQUERY", "SECRETQUERY"},
		{"https://h.test/cb?token=abc SECRETQUERY\nx", "SECRETQUERY"},
		{"https://alice:SECRETPASS\tword@h.test/x", "SECRETPASS"},
		{"https://alice:pass\rSECRETPASS@h.test/x", "SECRETPASS"},
	} {
		_, err := url.Parse(c.raw)
		if err == nil {
			t.Fatalf("setup: url.Parse(%q) accepted it", c.raw)
		}
		texts := []string{err.Error()}
		if !strings.Contains(c.raw, "?") {
			js, _ := json.Marshal(map[string]string{"error": err.Error()})
			texts = append(texts, string(js))
		}
		for _, text := range texts {
			if got := redact.Text(text); strings.Contains(got, c.secret) {
				t.Errorf("Text keeps %s:\n in  %s\n out %s", c.secret, text, got)
			}
		}
	}
}
