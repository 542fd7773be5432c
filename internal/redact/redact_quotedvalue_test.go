// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A double quote inside a URL that no quote opened is the URL's own
// (url.Parse accepts it in a query and a userinfo; net/http sends it as
// written): a query value it opens, the query after the value it closes
// and a password holding one are redacted. A quote before prose's or
// JSON's punctuation still closes the text the URL is in, and the
// backslash of a JSON-escaped quote after a URL stays with its quote.
func TestAQuoteInsideAURLDoesNotEndIt(t *testing.T) {
	for in, want := range map[string]string{
		`http://h.test/x?token="SECRET"`:                       `http://h.test/x?token=REDACTED"`,
		`http://h.test/x?a="SECRET"&b=SECRET2 next`:            `http://h.test/x?a=REDACTED&b=REDACTED next`,
		`see http://h.test/x?a=b"SECRET" ok`:                   `see http://h.test/x?a=REDACTED" ok`,
		`http://h.test/x?a=b"&c=SECRET`:                        `http://h.test/x?a=REDACTED&c=REDACTED`,
		`http://alice:SECRET"x@h.test/x`:                       `http://REDACTED:REDACTED@h.test/x`,
		`x=http://h.test/x?t="SECRET`:                          `x=http://h.test/x?t=REDACTED`,
		`{"msg":"GET http://h/x?a=\"SECRET\"","n":1}`:          `{"msg":"GET http://h/x?a=REDACTED","n":1}`,
		`{"msg":"GET http://h/x?a=","n":1}`:                    `{"msg":"GET http://h/x?a=REDACTED","n":1}`,
		`{"msg":"GET http://h/x?a=1","n":1}`:                   `{"msg":"GET http://h/x?a=REDACTED","n":1}`,
		`{"msg":"Get \"http://h/x?token=SECRET\": EOF","x":1}`: `{"msg":"Get \"http://h/x?token=REDACTED\": EOF","x":1}`,
		`msg="GET http://h/x?a=" next`:                         `msg="GET http://h/x?a=REDACTED" next`,
		`msg="GET http://h/x?a=1" next`:                        `msg="GET http://h/x?a=REDACTED" next`,
		`Get "http://h/x?token=\"SECRET\"": EOF`:               `Get "http://h/x?token=REDACTED": EOF`,
	} {
		if got := redact.Text(in); got != want {
			t.Errorf("Text(%s)\n = %s\nwant %s", in, got, want)
		}
	}
}

// docs/telemetry.md's limit: after an unbalanced quote earlier on its
// line, a URL's own quote of that string's level before punctuation ends
// the URL, and what follows it is text (the text cannot tell it from the
// string's closing quote, as `{"msg":"GET http://h/x?a=1","n":1}` holds
// one). Without the stray quote, the same URL is redacted whole.
func TestAStrayQuoteBeforeAURLEndsItAtItsOwnQuote(t *testing.T) {
	const url = `http://h.test/c?where={"k":"v"}&key=S3CRET`
	if got, want := redact.Text(`size 5" `+url+` failed`), `size 5" http://h.test/c?where=REDACTED":"v"}&key=S3CRET failed`; got != want {
		t.Errorf("after a stray quote:\n got %s\nwant %s", got, want)
	}
	if got, want := redact.Text(url+` failed`), `http://h.test/c?where=REDACTED&key=REDACTED failed`; got != want {
		t.Errorf("alone:\n got %s\nwant %s", got, want)
	}
}
