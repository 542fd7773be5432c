// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// URL's doc: "Userinfo becomes REDACTED:REDACTED, also when it is carried
// in u.Opaque". An Opaque that is an absolute URL ("http://u:pw@h/x"),
// which net/http writes as the request's target as it is (absolute-form),
// carries its userinfo after the scheme (a reviewer's find: the password
// stayed in url.full).
func TestURLRedactsTheUserinfoOfAnAbsoluteOpaque(t *testing.T) {
	for _, opaque := range []string{
		"http://bob:s3cretpw@other.example/x",
		"https://bob:s3cretpw@other.example/x",
		" http://bob:s3cretpw@other.example/x", // after a blank (reviewers' finds)
		"\t https://bob:s3cretpw@other.example/x",
		"\vhttp://bob:s3cretpw@other.example/x",
		"\fhttp://bob:s3cretpw@other.example/x",
		" //bob:s3cretpw@other.example/x",
		"\t//bob:s3cretpw@other.example/x",
	} {
		got := redact.URL(&url.URL{Scheme: "http", Opaque: opaque})
		if strings.Contains(got, "s3cretpw") || strings.Contains(got, "bob") || !strings.Contains(got, "REDACTED:REDACTED@other.example/x") {
			t.Errorf("URL(Opaque %q) = %q: the userinfo is recorded, or the rest lost", opaque, got)
		}
		if !redact.Changes(&url.URL{Scheme: "http", Opaque: opaque}) {
			t.Errorf("Changes(Opaque %q) = false: otelhttp's raw url.full would be kept", opaque)
		}
	}
}
