// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// net/http's `Get "…": EOF` in a JSON log line whose message is itself a
// JSON document (JSON marshalled twice or three times): the quote that
// closes the URL is escaped by 3 (or 7) backslashes, all of them the
// quote's. Text must keep them: the text still decodes level by level,
// and a URL with nothing to redact comes out as it went in.
func TestAURLsClosingQuoteKeepsItsBackslashesAtEveryDepth(t *testing.T) {
	for _, raw := range []string{
		`http://h.test/x`,
		`http://h.test/x?a=1`,
		`http://u:pw@h.test/x`,
	} {
		base := (&url.Error{Op: "Get", URL: raw, Err: errors.New("EOF")}).Error()
		sameAtEveryDepth(t, base, redact.Text(base), 3)
	}
}

// encoding/json writes a query's '&' as \u0026 (its HTML-safe default):
// a JSON log line of `GET http://h/x?a=1&token=…`. Text must keep the
// keys of the query (only the values become REDACTED): the key "token"
// must still be read after decoding.
func TestAJSONEscapedAmpersandKeepsTheQuerysKeys(t *testing.T) {
	for _, msg := range []string{
		`GET http://h.test/x?a=1&token=SECRET failed`,
		(&url.Error{Op: "Get", URL: "http://h.test/x?a=1&token=SECRET", Err: errors.New("EOF")}).Error(),
	} {
		b, err := json.Marshal(map[string]string{"err": msg})
		if err != nil {
			t.Fatal(err)
		}
		in := string(b)
		out := redact.Text(in)
		var m map[string]string
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("Text(%s)\n = %s: not JSON: %v", in, out, err)
		}
		if strings.Contains(out, "SECRET") || !strings.Contains(m["err"], "&token=REDACTED") {
			t.Errorf("Text(%s)\n = %s: want the key token kept, its value REDACTED", in, out)
		}
	}
}

// A JSON string inside a JSON string that begins with other text than a
// URL (`{\"e\":\"http://…`) is not a quoted URL: only the URL in it is,
// and the text after it stays (it was all read as one URL, and the inner
// JSON lost its end).
func TestAStringThatOnlyHoldsAURLIsNotReadAsOne(t *testing.T) {
	in := `{"e":"{\"e\":\"http://h.test/x?a=1 failed\"}"}`
	if got, want := redact.Text(in), `{"e":"{\"e\":\"http://h.test/x?a=REDACTED failed\"}"}`; got != want {
		t.Errorf("Text(%s)\n = %s\nwant %s", in, got, want)
	}
}
