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

// A password that holds "://" (generated passwords hold ':' and '/'), with
// a second one, a '?' or a '#' after it too, is a userinfo's whole:
// String and Text redact it whole, not from its own "://" on, and
// net/url's complaint about the port it read in it ("invalid port
// \":pa55:\" after host", ":1234:" no port either) loses the value too,
// as written and as a JSON log line escapes it.
func TestAPasswordHoldingASchemeSeparatorIsRedactedWhole(t *testing.T) {
	for _, raw := range []string{
		"http://alice:pa55://w0rd@h.example.test/x",
		"postgres://admin:s3cr://et@db.internal:5432/app",
		"http://alice:pa55://w0://rd@h.example.test/x",
		"http://alice:pa55://w0?rd@h.example.test/x",
		"http://alice:pa55://w0#rd@h.example.test/x",
		"http://alice:1234://5678@h.example.test/x",
		"http://alice:pa(55://w0rd@h.example.test/x", // sub-delimiters before its "://"
		"http://alice:pa=55://w0rd@h.example.test/x",
		"http://alice:pa'55://w0rd@h.example.test/x",
		"http://alice:pa[55://w0rd@h.example.test/x",
		"http://" + strings.Repeat("u", 245) + ":pa55://w0rd@h.example.test/x", // a long user name
		"http://alice:pa55://w0/rd@h.example.test/x",                           // a '/' after its "://"
		"postgres://admin:s3cr://e/t@db.internal:5432/app",
	} {
		userinfo := raw[strings.Index(raw, "://")+len("://") : strings.LastIndexByte(raw, '@')]
		user, password, _ := strings.Cut(userinfo, ":")
		firstPart, _, _ := strings.Cut(password, "://")
		_, parseErr := url.Parse(raw)
		line, _ := json.Marshal(map[string]string{"err": fmt.Sprint(parseErr)})
		cases := []struct{ name, got string }{
			{"String", redact.String(raw)},
			{"Text", redact.Text("dial " + raw + " failed")},
			{"Text of url.Parse's error", redact.Text(fmt.Sprint(parseErr))},
			{"Text of a JSON line", redact.Text(string(line))},
		}
		if strings.Contains(raw, "#") {
			// url.Parse's error quotes the URL up to its '#' alone
			// ("http://alice:pa55://w0"): no '@' tells a userinfo there.
			cases = cases[:2]
		}
		for _, c := range cases {
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

// A list of URLs joined by ',' or '&' (a proxy setting, a tool's
// mirrors), or one a line in a JSON line, keeps the first URL's host: the
// text before the second URL's "://" is no userinfo.
func TestAListOfURLsKeepsTheFirstHost(t *testing.T) {
	for _, raw := range []string{
		"http://proxy1.test:3128,http://u:p@proxy2.test:3128",
		"http://a.example.test,https://u:p@b.example.test/x",
		"http://a.example.test:3128&http://u:p@b.example.test/x",
		`{"proxies":"http://a.example.test:3128\nhttp://u:p@b.example.test/x"}`,
		`{"proxies":"http://a.example.test:3128\u000ahttp://u:p@b.example.test/x"}`,
	} {
		start := strings.Index(raw, "://") + len("://")
		first := raw[start : start+strings.IndexAny(raw[start:], ",&\\")]
		for _, c := range []struct{ name, got string }{
			{"String", redact.String(raw)},
			{"Text", redact.Text("proxies " + raw)},
		} {
			if !strings.Contains(c.got, first) || strings.Contains(c.got, "u:p@") {
				t.Errorf("%s(%q) = %q; want the host %q kept and the userinfo redacted", c.name, raw, c.got, first)
			}
		}
	}
}
