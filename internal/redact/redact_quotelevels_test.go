// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A quote in a query that, in no quoted string, more of the URL follows
// is the URL's own (`?a="x";token=…`, `?where={"name":"x"}&key=…`). An
// unbalanced double quote on an earlier line (an inch mark in
// errors.Join's first error), or in an earlier URL's value (the URL's
// own, not counted), does not make Text keep the secret after it. (One
// in prose on the same line does: TestAStrayQuoteBeforeAURLEndsItAtItsOwnQuote.)
func TestAStrayQuoteEarlierInTheTextKeepsNoSecret(t *testing.T) {
	for _, raw := range []string{
		`http://h.test/x?a="x";token=SECRET`,
		`http://h.test/1/classes/x?where={"name":"x"}&api_key=SECRET`,
	} {
		if _, err := url.Parse(raw); err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{
			errors.Join(errors.New(`invalid size 5" screen`), fmt.Errorf("GET %s failed", raw)).Error(),
			`GET http://h.test/x?q=5"&a=1 failed; GET ` + raw + ` failed`,
		} {
			if out := redact.Text(in); strings.Contains(out, "SECRET") {
				t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
			}
		}
	}
}

// A JSON (or slog text) log line whose earlier field holds an escaped
// quote (an odd number of them: `5" screen`) and whose error field holds
// net/http's `Get "http://h/x?a=1": EOF`: the escaped quote that closes
// the URL is the text's, not the URL's (it is at the level of the string
// the URL is in); Text must keep it, so the field still reads
// `Get "http://h.test/x?a=REDACTED": EOF`.
func TestAnEarlierEscapedQuoteKeepsTheQuoteThatClosesAURL(t *testing.T) {
	err := fmt.Errorf("Get %q: EOF", "http://h.test/x?a=1")
	const want = `Get "http://h.test/x?a=REDACTED": EOF`

	var jb bytes.Buffer
	slog.New(slog.NewJSONHandler(&jb, nil)).Error("request failed", "ua", `size 5" screen`, "err", err.Error(), "n", 1)
	line := strings.TrimSuffix(jb.String(), "\n")
	out := redact.Text(line)
	var rec map[string]any
	if e := json.Unmarshal([]byte(out), &rec); e != nil {
		t.Errorf("Text(%s)\n = %s: not JSON: %v", line, out, e)
	} else if rec["err"] != want || rec["ua"] != `size 5" screen` {
		t.Errorf("Text(%s)\n = %s: err %q, ua %q", line, out, rec["err"], rec["ua"])
	}

	var tb bytes.Buffer
	slog.New(slog.NewTextHandler(&tb, nil)).Error("request failed", "ua", `size 5" screen`, "err", err.Error(), "n", 1)
	line = strings.TrimSuffix(tb.String(), "\n")
	if out := redact.Text(line); !strings.Contains(out, fmt.Sprintf("err=%q n=1", want)) {
		t.Errorf("Text(%s)\n = %s: want err=%q n=1", line, out, want)
	}
}

// A stray quote closes with the string it is in, and an escaped line
// break closes the strings of its level as a raw one does: an inch mark
// inside a logfmt value (`ua="5\" x"`), or on errors.Join's first line
// written in a JSON log line once, twice or three times, does not hold
// for a URL after it, whose own quotes stay its own.
func TestAStrayQuoteEndsWithItsStringOrLine(t *testing.T) {
	const raw = `http://h.test/c?where={"name":"x"}&api_key=SECRET`
	in := []string{`ua="5\" x" GET ` + raw + ` failed`}
	s := errors.Join(errors.New(`invalid size 5" screen`), fmt.Errorf("GET %s failed", raw)).Error()
	for range 3 {
		b, err := json.Marshal(map[string]string{"err": s})
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
		in = append(in, s)
	}
	for _, s := range in {
		out := redact.Text(s)
		if strings.Contains(out, "SECRET") {
			t.Errorf("Text(%s)\n = %s: the secret is kept", s, out)
		}
		if strings.HasPrefix(s, "{") && !json.Valid([]byte(out)) {
			t.Errorf("Text(%s)\n = %s: not JSON any more", s, out)
		}
	}
}
