// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// String's doc: "the userinfo at the start ... becomes REDACTED:REDACTED";
// cutAuthority's doc: a "//" that is "a password's ("u:ab//cd@h")" begins
// no authority. A password may hold any of '=', '(', '[', '{', '<' before
// its "//" (a generated password with symbols): taken for the first "//"
// of a field's value, it would cut the userinfo there, and the user name
// and the password's head would stay in the text. A ':' before the
// opening tells a userinfo's password.
func TestAPasswordWithAnOpeningBeforeItsDoubleSlashIsRedactedWhole(t *testing.T) {
	for _, open := range []string{"=", "(", "[", "{", "<"} {
		in := "USERNAME:PWHEAD" + open + "//PWTAIL@db.test:5432"
		for what, got := range map[string]string{
			"String": redact.String(in),
			"Text":   redact.Text("dial " + in + " failed"),
		} {
			for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL"} {
				if strings.Contains(got, secret) {
					t.Errorf("%s of %q\n = %q\n keeps %q", what, in, got, secret)
				}
			}
		}
	}
}

// URL's doc: "Userinfo becomes REDACTED:REDACTED, also when it is carried
// in u.Opaque ("//user:pw@host/p", as net/url documents it ...)", and
// docs/telemetry.md: a proxy's path that holds its target URL loses the
// target's userinfo. A target URL in an opaque path whose password holds
// "//" loses it whole, as in a path: opaque's embeddedUserinfos cuts at a
// scheme's "://" only, as unparsed and redactEmbedded do.
func TestAnOpaqueProxyTargetsPasswordHoldingADoubleSlashIsRedactedWhole(t *testing.T) {
	for _, u := range []*url.URL{
		{Scheme: "http", Host: "p.test", Opaque: "//p.test/fetch/https://USERNAME:PWHEAD//PWTAIL@i.test/x"},
		{Scheme: "proxy", Opaque: "p.test/fetch/https://USERNAME:PWHEAD//PWTAIL@i.test/x"},
	} {
		got := redact.URL(u)
		for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL"} {
			if strings.Contains(got, secret) {
				t.Errorf("URL(Opaque %q)\n = %q\n keeps %q", u.Opaque, got, secret)
			}
		}
	}
}

// URL's output is a fixed point of String and Text (the package doc;
// TestURLWithADoubleSlashInItsPathIsAFixedPointOfStringAndText). The
// run of slashes after a scheme's ':' in a path ("file:///", an empty
// authority) taken as one "//" would make an '@' that begins the path
// after it ("/@scope/pkg") the end of an empty userinfo: String and Text
// would rewrite a URL that URL kept, and drop one of its slashes.
func TestAnEmptyAuthorityBeforeAnAtInAProxysPathIsAFixedPoint(t *testing.T) {
	urlIsAFixedPointOfStringAndText(t, "http://p.test/fetch/file:///@scope/pkg")
}
