package otelretry_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// referenceSanitizeURL is the first, straightforward SanitizeURL: the
// optimized one must agree with it on every URL.
func referenceSanitizeURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	clean := *u
	clean.User = nil
	clean.Fragment, clean.RawFragment = "", ""
	clean.ForceQuery = false
	if u.RawQuery != "" {
		pairs := strings.Split(u.RawQuery, "&")
		for i, pair := range pairs {
			if key, _, hasValue := strings.Cut(pair, "="); hasValue {
				pairs[i] = key + "=" + otelretry.Redacted
			}
		}
		clean.RawQuery = strings.Join(pairs, "&")
	}
	return clean.String()
}

func TestSanitizeURLEdgeCases(t *testing.T) {
	cases := map[string]string{
		"http://h.test/?":                           "http://h.test/",
		"http://h.test/p?#":                         "http://h.test/p",
		"http://h.test/p?a=1&&b":                    "http://h.test/p?a=REDACTED&&b",
		"http://h.test/p?&":                         "http://h.test/p?&",
		"http://h.test/p?=x":                        "http://h.test/p?=REDACTED",
		"http://h.test/p?k=":                        "http://h.test/p?k=REDACTED",
		"http://h.test/p?a=1=2":                     "http://h.test/p?a=REDACTED",
		"http://h.test/p?a=1;b=2":                   "http://h.test/p?a=REDACTED",
		"http://h.test/p?%3D=1&x%26y=2":             "http://h.test/p?%3D=REDACTED&x%26y=REDACTED",
		"http://h.test/a%2Fb?x=1":                   "http://h.test/a%2Fb?x=REDACTED",
		"http://[::1]:8080/p?q":                     "http://[::1]:8080/p?q",
		"http://[fe80::1%25en0]/p?k=v":              "http://[fe80::1%25en0]/p?k=REDACTED",
		"http://u:p@h.test/":                        "http://h.test/",
		"http://u@h.test/p?x=1#frag":                "http://h.test/p?x=REDACTED",
		"mailto:someone@h.test?subject=hi":          "mailto:someone@h.test?subject=REDACTED",
		"/relative/path?token=t":                    "/relative/path?token=REDACTED",
		"http://h.test/p?tok=" + otelretry.Redacted: "http://h.test/p?tok=REDACTED",
	}
	for in, want := range cases {
		u := mustURL(t, in)
		if got := otelretry.SanitizeURL(u); got != want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", in, got, want)
		}
		if ref := referenceSanitizeURL(u); ref != want {
			t.Errorf("reference(%q) = %q, want %q", in, ref, want)
		}
	}
}

func FuzzSanitizeURLMatchesReference(f *testing.F) {
	for _, s := range []string{
		"https://u:p@h.test/a?x=1&y=&z#f", "http://h.test/?", "http://h.test/p?a=1&&b", "mailto:x@y?z=1",
		"http://[::1]:80/a%2Fb?%3D=1", "//h.test/p?q=1", "p?x", "http://h.test/p?&&&=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		got, want := otelretry.SanitizeURL(u), referenceSanitizeURL(u)
		if got != want {
			t.Fatalf("SanitizeURL(%q) = %q, reference %q", raw, got, want)
		}
	})
}
