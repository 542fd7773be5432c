// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// docs/telemetry.md: "Cookies and bodies are never recorded, nor is text
// a server wrote that its client quotes in an error (a malformed header
// line ...)", and "otelretry records no header's value, on any channel".
// net/http's own error for a malformed Set-Cookie line is scrubbed, but
// not once a base wraps it as %q writes an error (the form the CHANGELOG's
// quoted-cause entry names: `aborted by "shard 7 failed"`) or as a JSON
// string: the quotes are escaped, scrubHeaderLines finds no '"' after the
// prefix, and the session id reaches Error(), the span status and the log
// record.
func TestAMalformedHeaderLineQuotedByTheBaseReachesNoTelemetry(t *testing.T) {
	const secret = "SIDSECRET0123456789"
	url, _ := rawH1Server(t, "HTTP/1.1 503 Service Unavailable\r\nSet-Cookie: sid="+secret+"\x7f\r\n\r\n")
	ht := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(ht.CloseIdleConnections)
	for name, wrap := range map[string]func(error) error{
		"%q": func(e error) error { return fmt.Errorf("upstream attempt failed: %q", e) },
		"json": func(e error) error {
			js, _ := json.Marshal(map[string]string{"error": e.Error()})
			return errors.New("upstream attempt failed: " + string(js))
		},
	} {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := ht.RoundTrip(r)
				if err != nil {
					return nil, wrap(err)
				}
				resp.Body.Close()
				return nil, errors.New("net/http accepted the malformed line")
			})
			msg, tel := errorTelemetry(t, http.MethodGet, url, nil, base)
			if !strings.Contains(msg, "malformed MIME header line") {
				t.Fatalf("not net/http's error: %s", msg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("Error() keeps the cookie's value: %s", msg)
			}
			if strings.Contains(tel, secret) {
				t.Errorf("telemetry keeps the cookie's value:\n%s", tel)
			}
		})
	}
}

// docs/telemetry.md: "otelretry records no header's value, on any
// channel", and text a server wrote that its client quotes in an error is
// replaced by REDACTED "also where a layer above quoted net/http's error
// again (%q, a JSON string)". quic-go's http3 client quotes a response
// header's invalid value as `invalid header field value for <name>: "<value>"`
// (an entry of quotedResponseText, scrubbed when it is not quoted again).
// Quoted again by a base, the value's quotes are escaped (`: \"…\"`):
// unquotedNameAndValue looks for `: "` only, finds none, and the cookie's
// value reaches Error() and the telemetry.
func TestAnHTTP3FieldValueQuotedByTheBaseReachesNoTelemetry(t *testing.T) {
	const secret = "SIDSECRET0123456789"
	quicErr := errors.New(`invalid header field value for set-cookie: "sid=` + secret + `\x01"`) // as quic-go's http3 writes it
	for name, wrap := range map[string]func(error) error{
		"as returned": func(e error) error { return e },
		"%q":          func(e error) error { return fmt.Errorf("upstream attempt failed: %q", e) },
		"json": func(e error) error {
			js, _ := json.Marshal(map[string]string{"error": e.Error()})
			return errors.New("upstream attempt failed: " + string(js))
		},
	} {
		t.Run(name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
				failingWith(func(*http.Request) error { return wrap(quicErr) }))
			if strings.Contains(msg, secret) {
				t.Errorf("Error() keeps the cookie's value: %s", msg)
			}
			if strings.Contains(tel, secret) {
				t.Errorf("telemetry keeps the cookie's value:\n%s", tel)
			}
		})
	}
}

// net/http's "too many transfer encodings: ["chunked" "…"]" quoted again
// by a base (%q, JSON) is read as a list: replaced by REDACTED, escaped
// again, and the base's own words after it (": will retry", the JSON's
// other fields) kept.
func TestARequotedListOfValuesKeepsTheRestOfTheMessage(t *testing.T) {
	inner := fmt.Sprintf("too many transfer encodings: %q", []string{"chunked", "SECRETVALUE42"})
	for name, text := range map[string]string{
		"%q":   fmt.Sprintf("attempt failed: %q: will retry", inner),
		"json": func() string { b, _ := json.Marshal(map[string]any{"error": inner, "shard": 7}); return string(b) }(),
	} {
		t.Run(name, func(t *testing.T) {
			msg, _ := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
				failingWith(func(*http.Request) error { return errors.New(text) }))
			if strings.Contains(msg, "SECRETVALUE42") {
				t.Fatalf("Error() keeps the value: %s", msg)
			}
			tail := map[string]string{"%q": ": will retry", "json": `"shard":7}`}[name]
			if !strings.Contains(msg, tail) || !strings.Contains(msg, `transfer encodings: \"REDACTED\"`) && !strings.Contains(msg, `transfer encodings: [\"REDACTED\"]`) {
				t.Errorf("the message past the list is lost or the quoting broken:\n in  %s\n out %s", text, msg)
			}
		})
	}
}
