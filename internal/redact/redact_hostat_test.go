// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// TestAHostWhosePasswordHoldsAnAtKeepsNoPartOfIt: a URL built by hand
// whose Host holds a userinfo with '@' in its password keeps the host
// after the last '@' only, as url.Parse splits an authority.
func TestAHostWhosePasswordHoldsAnAtKeepsNoPartOfIt(t *testing.T) {
	u := &url.URL{Scheme: "http", Host: "user:pw@HOSTSECRET@h.test", Path: "/p"}
	got := redact.URL(u)
	if want := "http://REDACTED:REDACTED%40h.test/p"; got != want {
		t.Errorf("URL(%#v) = %q, want %q", *u, got, want)
	}
	if strings.Contains(got, "HOSTSECRET") {
		t.Errorf("URL(%#v) = %q repeats the password", *u, got)
	}
}
