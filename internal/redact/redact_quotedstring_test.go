// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A quoted string (a JSON or slog field, Go's %q) that begins with other
// text than a URL is not a quoted URL (CHANGELOG: quotedURL requires the
// string to begin with a scheme or a path): "url=http://…?a=1 failed",
// "[http://…?a=1 x]" (fmt's %v of a []string), "(http://…?a=1) failed".
// Only the URL in it is; the text after it, up to the string's end, stays.
func TestAQuotedStringBeginningWithTextKeepsTheTextAfterItsURL(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"url=http://h.test/x?a=1 failed", "url=http://h.test/x?a=REDACTED failed"},
		{fmt.Sprint([]string{"http://h.test/x?a=1", "x"}), "[http://h.test/x?a=REDACTED x]"},
		{"(http://h.test/x?a=1) failed", "(http://h.test/x?a=REDACTED) failed"},
		{"url=http://h.test/x?a=1, n=2", "url=http://h.test/x?a=REDACTED, n=2"},
	} {
		if got := redact.Text(tc.msg); got != tc.want {
			t.Fatalf("depth 0: Text(%q) = %q, want %q", tc.msg, got, tc.want)
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		})).Error(tc.msg, "n", 1)
		line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		out := redact.Text(string(line))
		var rec map[string]any
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Errorf("Text(%s)\n = %s: not JSON: %v", line, out, err)
			continue
		}
		if rec["msg"] != tc.want {
			t.Errorf("Text(%s)\n = %s: msg %q, want %q", line, out, rec["msg"], tc.want)
		}
		quoted := fmt.Sprintf("%q", tc.msg)
		if got, want := redact.Text(quoted), fmt.Sprintf("%q", tc.want); got != want {
			t.Errorf("Text(%s) = %s, want %s", quoted, got, want)
		}
	}
}
