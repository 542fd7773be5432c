// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A password that holds "://" (generated passwords hold ':' and '/') is a
// userinfo's whole, as SplitUserinfo reads it: String and Text redact it
// whole, not from its own "://" on, and net/url's complaint about the
// port it read in it ("invalid port \":pa55:\" after host") loses the
// value too, as written and as a JSON log line escapes it.
func TestAPasswordHoldingASchemeSeparatorIsRedactedWhole(t *testing.T) {
	for _, raw := range []string{
		"http://alice:pa55://w0rd@h.example.test/x",
		"postgres://admin:s3cr://et@db.internal:5432/app",
	} {
		authority := raw[strings.Index(raw, "://")+len("://"):]
		userinfo, _, ok := redact.SplitUserinfo(authority)
		if !ok || !strings.Contains(userinfo, "://") {
			t.Fatalf("SplitUserinfo(%q) = %q, %v; want the whole userinfo", authority, userinfo, ok)
		}
		user, password, _ := strings.Cut(userinfo, ":")
		firstPart, _, _ := strings.Cut(password, "://")
		_, parseErr := url.Parse(raw)
		line, _ := json.Marshal(map[string]string{"err": fmt.Sprint(parseErr)})
		for _, c := range []struct{ name, got string }{
			{"String", redact.String(raw)},
			{"Text", redact.Text("dial " + raw + " failed")},
			{"Text of url.Parse's error", redact.Text(fmt.Sprint(parseErr))},
			{"Text of a JSON line", redact.Text(string(line))},
		} {
			if strings.Contains(c.got, user) || strings.Contains(c.got, firstPart) {
				t.Errorf("%s = %q keeps part of the userinfo %q", c.name, c.got, userinfo)
			}
		}
	}
	// A port that is one, however invalid, stays.
	const outOfRange = `parse "http://h:99999999/x": invalid port ":99999999" after host`
	if got := redact.Text(outOfRange); got != outOfRange {
		t.Errorf("Text(%q) = %q", outOfRange, got)
	}
}
