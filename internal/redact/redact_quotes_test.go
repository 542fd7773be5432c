// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// jsonLogged is err's text as a JSON log line holds it (slog's
// JSONHandler, json.Marshal): its quotes and backslashes escaped once more.
func jsonLogged(t *testing.T, rawURL string) string {
	t.Helper()
	if _, err := url.Parse(rawURL); err != nil {
		t.Fatalf("url.Parse(%q): %v", rawURL, err) // the URL is one net/http sends
	}
	err := &url.Error{Op: "Get", URL: rawURL, Err: io.EOF} // as http.Client returns it: Get "…": EOF
	b, jerr := json.Marshal(map[string]string{"error": err.Error()})
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(b)
}

// The error http.Client returns for a URL whose query value is quoted (Go
// quotes the URL: `Get "http://h/x?token=\"SECRET\"": EOF`), written in a
// JSON log line, its backslashes escaped again: the secret is redacted and
// the line stays JSON.
func TestAJSONLoggedErrorOfAQuotedValueKeepsNoSecret(t *testing.T) {
	in := jsonLogged(t, `http://h.test/x?token="SECRET"`)
	out := redact.Text(in)
	if strings.Contains(out, "SECRET") {
		t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("Text(%s)\n = %s: not JSON any more", in, out)
	}
}

// The quote that opens an empty query value (`token=""`, which url.Parse
// accepts and net/http sends) is the URL's own, and so is the query after
// the quote that closes it.
func TestAnEmptyQuotedValueDoesNotEndTheURL(t *testing.T) {
	for _, in := range []string{
		`GET http://h.test/x?token=""&key=SECRET failed`,
		`http://h.test/x?token=""&key=SECRET`,
	} {
		if _, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(in, "GET "), " failed")); err != nil {
			t.Fatal(err)
		}
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
		}
	}
}

// The backslash of a JSON-escaped quote after a URL stays with its quote,
// also after a value that ends in a backslash (a Windows directory,
// escaped by %q and by JSON): an odd number of them ends the word.
func TestTheBackslashOfAnEscapedQuoteAfterABackslashStays(t *testing.T) {
	in := jsonLogged(t, `http://h.test/x?dir=C:\tmp\`)
	out := redact.Text(in)
	if !json.Valid([]byte(out)) {
		t.Errorf("Text(%s)\n = %s: not JSON any more", in, out)
	}
	if want := `{"error":"Get \"http://h.test/x?dir=REDACTED\": EOF"}`; out != want {
		t.Errorf("Text(%s)\n = %s\nwant %s", in, out, want)
	}
}

// A quote after an '=' in a path (no query) is not a value's: it ends the
// URL, and the text stays as written.
func TestAQuoteAfterAnEqualsInAPathEndsTheURL(t *testing.T) {
	in := `GET http://h.test/x/a="b" failed`
	if out := redact.Text(in); out != in {
		t.Errorf("Text(%s)\n = %s\nwant it as it is", in, out)
	}
}
