// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// docs/telemetry.md ("Secrets"): "A path is kept as sent but for such a
// userinfo" (a proxy's target URL's), and URL's own comment: the path is
// "changed only where a userinfo is". Each target below is one url.Parse
// reads with its host and no userinfo at all: an escaped '?' or '#' in its
// path is the path's text, and an "a:b@c" after it is no userinfo. Before
// c776fbb URL kept these paths as sent; reading the path as sent now takes
// everything from the "://" to the '@', the target's host included, for a
// userinfo.
func TestATargetsEscapedQueryMarkInItsPathMakesNoUserinfo(t *testing.T) {
	for _, target := range []string{
		"https://cdn.test/img/logo%3Fv=2:w@2x.png",
		"https://h.test/x%3Fa:b@c",
		"https://h.test/x%23a:b@c",
		"https://h.test/w:s%3F@2x",
		"ftp://files.test/%3F:x@y",
	} {
		u := "http://proxy.test/fetch/" + target
		t.Run(target, func(t *testing.T) {
			parsedTarget, err := url.Parse(target)
			if err != nil || parsedTarget.User != nil || parsedTarget.Host == "" {
				t.Fatalf("url.Parse(%q) = %v, %v: the case is void", target, parsedTarget, err)
			}
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			if got := redact.URL(pu); got != pu.String() {
				t.Errorf("URL(%s) = %s: a target without a userinfo lost its host and path", pu, got)
			}
		})
	}
}
