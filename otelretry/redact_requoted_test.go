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
