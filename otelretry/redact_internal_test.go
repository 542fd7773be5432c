// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/url"
	"testing"
)

// A Transport's last sanitized URL is reused only for a URL equal to it in
// every field: a URL that differs in any one field, or a nil URL, is
// sanitized anew, and what comes back is always SanitizeURL's.
func TestLastURLReusesOnlyAnEqualURL(t *testing.T) {
	base := url.URL{Scheme: "https", Host: "api.test", Path: "/v1/items", RawQuery: "id=42"}
	variants := []func(u *url.URL){
		func(*url.URL) {},
		func(u *url.URL) { u.Scheme = "http" },
		func(u *url.URL) { u.User = url.UserPassword("bob", "PW") },
		func(u *url.URL) { u.User = url.User("bob") },
		func(u *url.URL) { u.Host = "bob:PW@api.test" },
		func(u *url.URL) { u.Path = "/v1/other" },
		func(u *url.URL) { u.Path, u.RawPath = "/v1/a b", "/v1/a%20b" },
		func(u *url.URL) { u.RawQuery = "id=43&token=SECRET" },
		func(u *url.URL) { u.RawQuery = "" },
		func(u *url.URL) { u.RawQuery, u.ForceQuery = "", true },
		func(u *url.URL) { u.Fragment = "f" },
		func(u *url.URL) { u.Opaque = "//bob:PW@api.test/x" },
		func(u *url.URL) { u.OmitHost = true },
	}
	var last lastURL
	if got := last.sanitize(nil); got != "" {
		t.Errorf("sanitize(nil) = %q, want \"\"", got)
	}
	for round := range 2 {
		for i, change := range variants {
			u := base
			change(&u)
			for range 2 { // a miss, then a hit
				if got, want := last.sanitize(&u), SanitizeURL(&u); got != want {
					t.Errorf("round %d, variant %d: sanitize(%q) = %q, want %q", round, i, u.String(), got, want)
				}
			}
		}
	}
	withPassword := base
	withPassword.User = url.UserPassword("bob", "PW")
	last.sanitize(&withPassword)
	if e := last.last.Load(); e == nil || e.u.User != nil {
		t.Errorf("kept %+v after a URL with userinfo, want the URL before it", e)
	}
	same := base // an equal URL in other memory
	if allocs := testing.AllocsPerRun(10, func() { last.sanitize(&same) }); allocs != 0 {
		t.Errorf("sanitizing the last URL again allocates %v, want 0", allocs)
	}
}
