// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// jsonString is s as a JSON log line writes a string field (slog's
// JSONHandler, json.Marshal).
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A URL an error quoted with %q, the error then written in JSON or %q (its
// quotes escaped once more), is followed by the escaped quote that closes
// it and the rest of the message: a line break and a joined error
// (errors.Join), or a period. That quote is the text's, not the URL's: the
// rest of the message stays, and so does the escaped quote.
func TestTheTextAfterTheEscapedQuoteThatClosesAURLStays(t *testing.T) {
	joined := errors.Join(fmt.Errorf("redirect to %q", "http://h.test/x?a=1"), errors.New("second error")).Error()
	period := fmt.Sprintf("redirect to %q.", "http://h.test/x?a=1")
	for _, tc := range []struct{ in, want string }{
		{jsonString(t, joined), `"redirect to \"http://h.test/x?a=REDACTED\"\nsecond error"`},
		{fmt.Sprintf("%q", joined), `"redirect to \"http://h.test/x?a=REDACTED\"\nsecond error"`},
		{`{"err":` + jsonString(t, period) + `,"n":1}`, `{"err":"redirect to \"http://h.test/x?a=REDACTED\".","n":1}`},
		{jsonString(t, fmt.Sprintf("redirect to %q\nsecond error", "http://h.test/x#access_token=tok")), `"redirect to \"http://h.test/x\"\nsecond error"`},
	} {
		if out := redact.Text(tc.in); out != tc.want {
			t.Errorf("Text(%s)\n = %s\nwant %s", tc.in, out, tc.want)
		}
	}
}

// A query split on ';' (url.Parse accepts it, net/http sends it as
// written) whose first value is quoted: the value and the pair after the
// ';' are one value to URL, which Text redacts; the secret after the ';'
// is not kept, as plain text or as http.Client's error in a JSON log line.
func TestASemicolonAfterAQuotedValueKeepsNoSecret(t *testing.T) {
	const raw = `http://h.test/x?a="x";token=SECRET`
	if _, err := url.Parse(raw); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"GET " + raw + " failed", jsonLogged(t, raw)} {
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
		}
	}
}

// A query whose value holds quoted text before a ':' or a ')' (a JSON
// filter, as Parse's REST API and GraphQL over GET take one; a function
// call) holds more of the URL after that quote: the API key in the next
// pair is not kept, as plain text or as http.Client's error in a JSON log
// line.
func TestAQueryValueHoldingQuotedTextKeepsNoSecret(t *testing.T) {
	for _, raw := range []string{
		`http://h.test/1/classes/x?where={"name":"x"}&api_key=SECRET`,
		`http://h.test/graphql?variables={"password":"SECRET"}`,
		`http://h.test/x?filter=contains(name,"x")&key=SECRET`,
	} {
		if _, err := url.Parse(raw); err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{"GET " + raw + " failed", jsonLogged(t, raw)} {
			if out := redact.Text(in); strings.Contains(out, "SECRET") {
				t.Errorf("Text(%s)\n = %s: the secret is kept", in, out)
			}
		}
	}
}

// url.Parse's error for a password that begins and ends with a quote
// prints the URL quoted; written in a JSON log line, its quotes are
// escaped once more. Both quotes are in the userinfo with an '@' ahead:
// the password is not kept.
func TestAQuotedPasswordInAJSONLoggedParseErrorKeepsNoSecret(t *testing.T) {
	_, err := url.Parse(`http://alice:"SECRET"@h.test/x`)
	if err == nil {
		t.Fatal("url.Parse accepted the quoted password")
	}
	for _, in := range []string{err.Error(), jsonString(t, err.Error()), `{"error":` + jsonString(t, err.Error()) + `}`} {
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Errorf("Text(%s)\n = %s: the password is kept", in, out)
		}
	}
}
