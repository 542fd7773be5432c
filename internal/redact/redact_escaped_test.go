// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// URL's output is a fixed point (URL of it parsed, and String of it,
// give it back) and keeps no password, for proxy paths escaped in other
// spellings.
func TestURLFixedPointOnEscapedProxyPaths(t *testing.T) {
	for _, in := range []string{
		"http://p.test/fetch/https%3A%2F%2Fadmin%3AS3CRET!pw%40i.test%2Fx",
		"http://p.test/fetch/https%3a%2f%2fadmin%3aS3CRETpw%40i.test%2fx",
		"http://p.test/a%2525252541/https:%252F%252Fadmin:S3CRET@h/x",
		"http://p.test/50%25/https:%252F%252Fadmin:S3CRET@h/x%3Fq%3D1",
		"http://p.test/fetch/https%25253A%25252F%25252Fadmin%25253AS3CRET%252540i.test",
		"http://p.test/fetch/https%2525253A%2525252F%2525252Fadmin%2525253AS3CRET%25252540i.test",
		"http://p.test/x/https://a:b@c/https%3A%2F%2Fadmin%3AS3CRET%40i.test",
		"http://p.test/x/https:%2F%2Fadmin:S3CRET%2Fsl@i.test/y",
		"http://p.test/x/https:%2F%2Fadmin:S3CRET%40at@i.test/y",
		"http://p.test/x/https:%2F%2Fadmin:S3C%2FRET@i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3C%252FRET%40i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3C%2FRET%40i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3C%3FRET%40i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3C%23RET%40i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3C%2540RET%40i.test%2Fy",
		"http://p.test/x/https%3A%2F%2Fadmin%3AS3CRET%40i.test%3Fnext%3Dhttps%3A%2F%2Fu%3AS3CRET2%40j",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		out := redact.URL(u)
		if strings.Contains(out, "S3C") {
			t.Errorf("URL(%q) = %q keeps the password", in, out)
		}
		if s := redact.String(in); strings.Contains(s, "S3C") {
			t.Errorf("String(%q) = %q keeps the password", in, s)
		}
		if again := redact.String(out); again != out {
			t.Errorf("String(URL(%q)) = %q, URL gave %q: not a fixed point", in, again, out)
		}
		if v, err := url.Parse(out); err != nil {
			t.Errorf("URL(%q) = %q does not parse: %v", in, out, err)
		} else if again := redact.URL(v); again != out {
			t.Errorf("URL(URL(%q)) = %q, URL gave %q: not a fixed point", in, again, out)
		}
	}
}

// TestRedactUserinfo: a userinfo is replaced in any spelling an '@' ends,
// and only there: a short one elsewhere in the text stays.
func TestRedactUserinfo(t *testing.T) {
	for _, c := range []struct{ text, userinfo, want string }{
		{"GET /f/https%3a%2f%2fadmin%3aS3CRET%40h", "admin:S3CRET", "GET /f/https%3a%2f%2fREDACTED:REDACTED%40h"},
		{"GET /f/https%253A%252F%252Fadmin%253AS3CRET%2540h", "admin:S3CRET", "GET /f/https%253A%252F%252FREDACTED:REDACTED%2540h"},
		{"q=https%3A%2F%2Fadmin%3Apass+word%40h", "admin:pass word", "q=https%3A%2F%2FREDACTED:REDACTED%40h"},
		{"a%25b@h", "a%b", "REDACTED:REDACTED@h"},
		{"a%2525b@h", "a%b", "REDACTED:REDACTED@h"},
		{"data a at https://a@h", "a", "data a at https://REDACTED:REDACTED@h"},
		{"no userinfo here", "admin:S3CRET", "no userinfo here"},
	} {
		if got := redact.RedactUserinfo(c.text, c.userinfo); got != c.want {
			t.Errorf("RedactUserinfo(%q, %q) = %q, want %q", c.text, c.userinfo, got, c.want)
		}
	}
}

// TestTextRedactsAURLEscapedWhole: a word of free text that holds a URL
// escaped whole loses its userinfo, in the word's own spelling.
func TestTextRedactsAURLEscapedWhole(t *testing.T) {
	for in, want := range map[string]string{
		"proxy refused GET /fetch/https%3a%2f%2fadmin%3aS3CRET%40i.test%2fx": "proxy refused GET /fetch/https%3a%2f%2fREDACTED:REDACTED%40i.test%2fx",
		"next=https%3A%2F%2Fu%3AS3CRET!x%40h, then":                          "next=https%3A%2F%2FREDACTED:REDACTED%40h, then",
		"50% of https%3A%2F%2Fh%2Fx":                                         "50% of https%3A%2F%2Fh%2Fx",
	} {
		got := redact.Text(in)
		if got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if again := redact.Text(got); again != got {
			t.Errorf("Text(%q) = %q: the sanitizer changes its own output", got, again)
		}
	}
}

// encodeURIComponent (named by the CHANGELOG for its '!') leaves ' ( )
// unescaped too; a password holding one, in a URL escaped whole, must
// lose its userinfo in Text as the '!' one does (TestTextRedactsAURLEscapedWhole).
func TestTextRedactsAnEncodeURIComponentURLWithAQuoteOrParen(t *testing.T) {
	for in, want := range map[string]string{
		"proxy refused GET /fetch/https%3A%2F%2Fadmin%3AS3'CRET%40i.test%2Fx": "proxy refused GET /fetch/https%3A%2F%2FREDACTED:REDACTED%40i.test%2Fx",
		"next=https%3A%2F%2Fu%3AS3(CRET)x%40h, then":                          "next=https%3A%2F%2FREDACTED:REDACTED%40h, then",
		"next=https%3A%2F%2Fu%3AS3!CRET%40h, then (control)":                  "next=https%3A%2F%2FREDACTED:REDACTED%40h, then (control)",
	} {
		if got := redact.Text(in); got != want {
			t.Errorf("Text(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// A URL escaped whole with an empty userinfo ("https://@h", which
// url.Parse accepts) beside a segment escaped twice: redactEmbedded finds
// the empty userinfo at two decodings and writes REDACTED:REDACTED twice;
// Text of that output changes it again (not a fixed point).
func TestTextFixedPointOnAnEmptyEscapedUserinfo(t *testing.T) {
	for _, in := range []string{
		"GET /fetch/https%3A%2F%2F%40h.test%2Fa%2520b failed",
		"https%3A%2F%2F%40h.test%2Fa%2520b",
	} {
		out := redact.Text(in)
		if again := redact.Text(out); again != out {
			t.Errorf("Text(%q) = %q, Text of it = %q: not a fixed point", in, out, again)
		}
		if s := redact.String(in); redact.String(s) != s {
			t.Errorf("String(%q) = %q, String of it = %q: not a fixed point", in, s, redact.String(s))
		}
	}
}

// A proxy path with an escaped target's userinfo: URL redacts it, and the
// other segments stay as sent. Decoding the whole path (up to
// four times, escaped once anew) made a segment that names "50%25" (sent
// "50%2525") becomes "50%" (written "50%25"), another resource; and a
// segment "a%2Fb" becomes two, "a/b".
func TestURLKeepsTheOtherSegmentsOfAProxyPath(t *testing.T) {
	for in, want := range map[string]string{
		"http://p.test/files/50%2525/fetch/https%3A%2F%2Fu%3Apw%40h": "http://p.test/files/50%2525/fetch/https%3A%2F%2FREDACTED:REDACTED%40h",
		"http://p.test/files/a%2Fb/fetch/https%3A%2F%2Fu%3Apw%40h":   "http://p.test/files/a%2Fb/fetch/https%3A%2F%2FREDACTED:REDACTED%40h",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		got := redact.URL(u)
		g, _ := url.Parse(got)
		w, _ := url.Parse(want)
		// Compare the segments as decoded once, whatever the spelling of
		// the redacted target.
		if gs, ws := strings.Split(g.EscapedPath(), "/")[:3], strings.Split(w.EscapedPath(), "/")[:3]; strings.Join(gs, "/") != strings.Join(ws, "/") {
			t.Errorf("URL(%q) = %q: the segments before the target changed (%q, sent %q)", in, got, strings.Join(gs, "/"), strings.Join(ws, "/"))
		}
	}
}

// redactEmbedded merges the userinfos it found at each decoding: an empty
// userinfo
// found one decoding deeper that begins exactly where another ends (at
// its '@') was written too, REDACTED:REDACTED twice in a row,
// and URL of that output changed it again.
func TestURLFixedPointOnAdjacentUserinfos(t *testing.T) {
	in := "http://p.test/fetch/https%3A%2F%2Fu%3AS3CRET%40h.test%253A%252F%252F%40x"
	u, err := url.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	out := redact.URL(u)
	if strings.Contains(out, "REDACTED:REDACTEDREDACTED") {
		t.Errorf("URL(%q) = %q writes REDACTED:REDACTED twice", in, out)
	}
	v, _ := url.Parse(out)
	if again := redact.URL(v); again != out {
		t.Errorf("URL(%q)\n   = %q\nURL of it = %q: not a fixed point", in, out, again)
	}
	if s := redact.String(in); redact.String(s) != s {
		t.Errorf("String(%q) = %q, String of it = %q", in, s, redact.String(s))
	}
}

// A proxy path that holds an '@' before its escaped target ("/users/@me/",
// a path userinfoEnd itself names as a path, or an e-mail address): URL's
// output must be a fixed point of String and of Text, as
// TestURLFixedPointOnEscapedProxyPaths asks for other proxy paths (String
// of it dropped the proxy's host).
func TestStringOfURLKeepsTheHostWithAnAtInTheProxyPath(t *testing.T) {
	for _, in := range []string{
		"http://p.test/users/@me/https%3A%252F%252Fadmin%3AS3CRET%40i.test%252Fx",
		"http://p.test/users/@me/https:%2F%2Fadmin:S3CRET@i.test%2Fx",
		"http://p.test/mail/a@b.test/https:%2F%2Fadmin:S3CRET@i.test%2Fx",
	} {
		urlIsAFixedPointOfStringAndText(t, in)
	}
}

// A real password that holds a '/' and ends in REDACTED:REDACTED: the '@'
// after it ends its userinfo, since no escaped "://" comes before it (a
// first rule skipped every '@' after REDACTED:REDACTED and kept it).
func TestAPasswordEndingInTheRedactedFormIsRedacted(t *testing.T) {
	for _, in := range []string{
		"https://tenant:S3CRET/REDACTED:REDACTED@h.test/x",
		"postgres://app:S3/CRET:REDACTED:REDACTED@db/x",
	} {
		if out := redact.String(in); strings.Contains(out, "S3") {
			t.Errorf("String(%q) = %q keeps the password", in, out)
		}
		if out := redact.Text("dial " + in + " failed"); strings.Contains(out, "S3") {
			t.Errorf("Text(dial %q failed) = %q keeps the password", in, out)
		}
	}
}

// url.PathEscape of a target URL whose query holds an e-mail address:
// URL's output is a fixed point of String and Text (they dropped the
// proxy's host and path: "http://REDACTED:REDACTED@b.test").
func TestStringOfURLFixedPointWithAnEmailInTheEscapedTargetsQuery(t *testing.T) {
	for _, target := range []string{
		"https://admin:S3CRET@i.test/x?e=a@b.test",
		"https://admin:S3CRET@i.test/cb?email=ops@corp.test&x=1",
	} {
		in := "http://p.test/fetch/" + url.PathEscape(target)
		urlIsAFixedPointOfStringAndText(t, in)
	}
}

// A proxy path with an '@' segment before a target escaped by
// url.PathEscape whose query holds an e-mail address (the case
// TestStringOfURLFixedPointWithAnEmailInTheEscapedTargetsQuery covers
// after "/fetch/", and TestStringOfURLKeepsTheHostWithAnAtInTheProxyPath
// covers without the e-mail): URL's output must be a fixed point of
// String and Text (they dropped the proxy's host and path and named the
// e-mail's domain as a host with credentials).
func TestStringOfURLFixedPointWithAtSegmentAndEmailInEscapedTarget(t *testing.T) {
	for _, c := range []struct{ pre, target string }{
		{"/users/@me/avatar/", "https://cdn.test/a.png?owner=ops@corp.test"},
		{"/users/@me/", "https://admin:S3CRET@i.test/x?e=a@b.test"},
		{"/mail/a@b.test/", "https://i.test/cb?email=ops@corp.test"},
	} {
		in := "http://p.test" + c.pre + url.PathEscape(c.target)
		urlIsAFixedPointOfStringAndText(t, in)
	}
}

// urlIsAFixedPointOfStringAndText fails t unless URL's output for in is
// what String of it and Text of an error quoting it give back.
func urlIsAFixedPointOfStringAndText(t *testing.T, in string) {
	t.Helper()
	u, err := url.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	out := redact.URL(u)
	if again := redact.String(out); again != out {
		t.Errorf("URL(%q)\n   = %q\nString of it = %q: not a fixed point", in, out, again)
	}
	msg := `Get "` + out + `": EOF`
	if again := redact.Text(msg); again != msg {
		t.Errorf("Text(%q)\n   = %q: the sanitized URL changed again", msg, again)
	}
}
