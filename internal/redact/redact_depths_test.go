// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// jsonDepth marshals s as the value of "e" depth times.
func jsonDepth(t *testing.T, s string, depth int) string {
	t.Helper()
	for range depth {
		b, err := json.Marshal(map[string]string{"e": s})
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
	}
	return s
}

// sameAtEveryDepth checks that Text of msg marshalled 1 to depths times
// is JSON at every level and decodes to want, what Text gives at depth 0.
func sameAtEveryDepth(t *testing.T, msg, want string, depths int) {
	t.Helper()
	for depth := 1; depth <= depths; depth++ {
		in := jsonDepth(t, msg, depth)
		out := redact.Text(in)
		got, ok := unJSONDepth(out, depth)
		if !ok {
			t.Errorf("depth %d: Text(%s)\n = %s: not JSON at every level", depth, in, out)
			continue
		}
		if got != want {
			t.Errorf("depth %d: Text(%s)\n = %s\ndecodes to %q\nwant       %q", depth, in, out, got, want)
		}
	}
}

// unJSONDepth undoes jsonDepth; ok is false when out is not JSON at every level.
func unJSONDepth(out string, depth int) (string, bool) {
	for range depth {
		var m map[string]string
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			return "", false
		}
		out = m["e"]
	}
	return out, true
}

// docs/telemetry.md: "a line break closes every string". A first error
// that quotes a truncated body (an unclosed quote before a URL), joined
// with net/http's error on the next line: the quoted string must not run
// on across the raw line break, and the second line's text ("Get", the
// host, ": EOF") must survive, as it does when the same text is one JSON
// string deeper.
func TestARawLineBreakClosesAQuotedURL(t *testing.T) {
	msg := errors.Join(
		errors.New(`server said: {"next":"http://h.test/x?a=1`),
		&url.Error{Op: "Get", URL: "http://h2.test/y?token=SECRETX", Err: io.EOF},
	).Error()
	want := "server said: {\"next\":\"http://h.test/x?a=REDACTED\n" +
		"Get \"http://h2.test/y?token=REDACTED\": EOF"
	if got := redact.Text(msg); got != want {
		t.Errorf("depth 0: Text(%q)\n = %q\nwant %q", msg, got, want)
	}
	sameAtEveryDepth(t, msg, want, 3)
}

// A quoted URL over a raw line break eats the next line's text: here a
// proxy address on the second line loses its host and the word before it.
func TestARawLineBreakKeepsTheNextLine(t *testing.T) {
	msg := "bad \"http://h.test/x\nproxy u:SECRETX@h2.test:8080 failed \"ok\""
	got := redact.Text(msg)
	if strings.Contains(got, "SECRETX") {
		t.Fatalf("kept the secret: %q", got)
	}
	for _, part := range []string{`bad "http://h.test/x` + "\n", "proxy ", "@h2.test:8080 failed"} {
		if !strings.Contains(got, part) {
			t.Errorf("Text(%q)\n = %q: lost %q", msg, got, part)
		}
	}
}

// Text's godoc: a URL whose slashes JSON escaped ("https:\/\/u:p@h\/x") is
// cleaned as the URL it stands for. Such a text (a PHP server's JSON
// quoted in an error) in a Go JSON log line, where its backslashes are
// escaped once more, loses its scheme "http:\/\/" with the userinfo.
func TestJSONEscapedSlashesOneDeeperKeepTheScheme(t *testing.T) {
	msg := `redirect to http:\/\/u:SECRETX@h.test\/x failed`
	want := `redirect to http:\/\/REDACTED:REDACTED@h.test\/x failed`
	if got := redact.Text(msg); got != want {
		t.Fatalf("depth 0: Text(%q) = %q, want %q", msg, got, want)
	}
	sameAtEveryDepth(t, msg, want, 3)
}
