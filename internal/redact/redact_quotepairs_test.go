// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// Two errors joined with "; " (as go.uber.org/multierr joins them): the
// first quotes its URL with %q, balanced, and ends there; the second
// names a URL whose query holds quoted JSON. The quote that closes the
// first URL is swallowed into that URL word (not counted), so the string
// it closes stays "open" for the rest of the line and the second URL's
// secret is kept. With '|' the text between the URLs is eaten too.
func TestABalancedQuotedURLBeforeASemicolonKeepsNoLaterSecret(t *testing.T) {
	const raw = `http://h.test/y?where={"k":"v"}&key=SECRET`
	if _, err := url.Parse(raw); err != nil {
		t.Fatal(err)
	}
	first := fmt.Errorf("unexpected redirect to %q", "http://h.test/x?a=1").Error()
	second := fmt.Errorf("GET %s failed", raw).Error()
	for _, in := range []string{
		first + "; " + second, // multierr's separator
		first + "|" + second,
	} {
		out := redact.Text(in)
		if strings.Contains(out, "SECRET") {
			t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
		}
		if !strings.Contains(out, "GET http://h.test/y?") {
			t.Errorf("Text(%s)\n = %s: the text between the URLs is lost", in, out)
		}
	}
}

// A JSON encoder that escapes '"' as \u0022 (System.Text.Json's default
// encoder, HTML-safe encoders): net/http's `Get "…": EOF` in a JSON
// string. Text keeps the escaped quote that closes the URL when it is
// written \" but drops it when it is written \u0022 after a query value or
// a fragment: the message then reads `Get \u0022http://h.test/x?a=REDACTED: EOF`.
func TestAUnicodeEscapedClosingQuoteStays(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"msg":"Get \"http://h.test/x?a=1\": EOF","n":1}`, `{"msg":"Get \"http://h.test/x?a=REDACTED\": EOF","n":1}`},
		{`{"msg":"Get \u0022http://h.test/x?a=1\u0022: EOF","n":1}`, `{"msg":"Get \u0022http://h.test/x?a=REDACTED\u0022: EOF","n":1}`},
		{`{"msg":"Get \u0022http://h.test/x#frag\u0022: EOF","n":1}`, `{"msg":"Get \u0022http://h.test/x\u0022: EOF","n":1}`},
	} {
		if out := redact.Text(tc.in); out != tc.want {
			t.Errorf("Text(%s)\n = %s\nwant %s", tc.in, out, tc.want)
		}
	}
}

// A CSV row (encoding/csv) whose field names a URL with a quoted query
// value: CSV doubles the quote, and the field's own quote is balanced
// (not a stray prose quote). The token after the quoted value is kept.
func TestACSVFieldKeepsNoSecret(t *testing.T) {
	const raw = `http://h.test/x?a="v"&token=SECRET`
	if _, err := url.Parse(raw); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write([]string{"GET " + raw + " failed", "200"}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	in := strings.TrimSuffix(b.String(), "\n")
	if out := redact.Text(in); strings.Contains(out, "SECRET") {
		t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
	}
}
