// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md ("Secrets"): a user name alone from 8 bytes and a
// password alone at any length are lost, "So are those of a target URL's
// userinfo in the path". A target whose user name holds an escaped ':'
// (url.UserPassword("svc:admin-user", …) writes "svc%3Aadmin-user") has
// that name and its password, as url.Parse reads the target; neither may
// reach telemetry alone.
func TestATargetUserNameWithAnEscapedColonLosesItsPartsAlone(t *testing.T) {
	target := &url.URL{Scheme: "https", User: url.UserPassword("svc:admin-user", "S3cretPassw0rd"), Host: "internal.test", Path: "/x"}
	raw := "http://p.test/fetch/" + target.String() // .../fetch/https://svc%3Aadmin-user:S3cretPassw0rd@internal.test/x
	for _, secret := range []string{"S3cretPassw0rd", "svc:admin-user"} {
		t.Run(secret, func(t *testing.T) {
			got := everyTelemetryText(t, raw, func(*http.Request) error {
				return fmt.Errorf("auth failed for %s", secret)
			})
			if strings.Contains(got, secret) {
				t.Errorf("%q reached telemetry:\n%s", secret, got)
			}
		})
	}
}

// SanitizeURL's godoc and docs/telemetry.md ("Secrets"): userinfo
// becomes REDACTED:REDACTED, also in a proxy's path that holds its target
// URL. A target built with url.UserPassword whose password holds a '?'
// or a '#' (escaped "%3F", "%23" as Userinfo.String writes them) keeps
// its user name and password in url.full and in an error's text.
func TestATargetPasswordWithAnEscapedQueryMarkIsRedacted(t *testing.T) {
	for _, pass := range []string{"S3cret?k=v1", "S3cret#k=v1"} {
		target := &url.URL{Scheme: "https", User: url.UserPassword("svc-admin-user", pass), Host: "internal.test", Path: "/x"}
		raw := "http://p.test/fetch/" + target.String()
		t.Run(pass, func(t *testing.T) {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if clean := otelretry.SanitizeURL(u); strings.Contains(clean, "svc-admin-user") || strings.Contains(clean, "S3cret") {
				t.Errorf("SanitizeURL(%q) = %q: the target's userinfo is kept", raw, clean)
			}
			got := everyTelemetryText(t, raw, func(*http.Request) error {
				return fmt.Errorf("auth failed for %s", pass)
			})
			if strings.Contains(got, "svc-admin-user") || strings.Contains(got, "S3cret") {
				t.Errorf("the target's userinfo reached telemetry:\n%s", got)
			}
		})
	}
}

// A path that holds text after a target URL's host that merely looks like
// a userinfo ("/fetch/https://cdn.test/img/w:s@2x": url.Parse reads no
// userinfo there, host cdn.test) has no password to lose; before e9dd18a
// such a "userinfo" went only whole before its '@', now its "password"
// ("s") is taken out of every word of the error alone: "connection
// refused" reads "connection refuREDACTEDed", hiding what the error says
// (docs/telemetry.md's reason a short user name is kept).
func TestANonUserinfoInAPathLeavesAnErrorsWordsAlone(t *testing.T) {
	const raw = "http://p.test/fetch/https://cdn.test/img/w:s@2x"
	target, err := url.Parse(strings.TrimPrefix(raw, "http://p.test/fetch/"))
	if err != nil || target.User != nil {
		t.Fatalf("the target holds a userinfo as url.Parse reads it: %v %v", target, err)
	}
	const msg = "dial tcp 127.0.0.1:443: connect: connection refused"
	got := everyTelemetryText(t, raw, func(*http.Request) error { return errors.New(msg) })
	if !strings.Contains(got, msg) {
		t.Errorf("the error's text is mangled, want %q in:\n%s", msg, got)
	}
}
