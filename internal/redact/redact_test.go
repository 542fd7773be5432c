// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/redact"
)

func TestPlaceholderIsTheVocabulary(t *testing.T) {
	if redact.Placeholder != attrs.Redacted {
		t.Fatalf("redact.Placeholder %q differs from attrs.Redacted %q", redact.Placeholder, attrs.Redacted)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h.test/a?x=1&y=&z":            "https://REDACTED:REDACTED@h.test/a?x=REDACTED&y=REDACTED&z",
		"http://u@h.test/p?x=1#frag":               "http://REDACTED:REDACTED@h.test/p?x=REDACTED",
		"http://:p@h.test/":                        "http://REDACTED:REDACTED@h.test/",
		"http://h.test:8080/p?X-Amz-Signature=abc": "http://h.test:8080/p?X-Amz-Signature=REDACTED",
		"http://h.test/":                           "http://h.test/",
		"https://h.test/a#frag":                    "https://h.test/a",
		"http://h.test/?":                          "http://h.test/",
		"http://h.test/p?#":                        "http://h.test/p",
		"http://h.test/p?a=1&&b":                   "http://h.test/p?a=REDACTED&&b",
		"http://h.test/p?&":                        "http://h.test/p?&",
		"http://h.test/p?=x":                       "http://h.test/p?=REDACTED",
		"http://h.test/p?k=":                       "http://h.test/p?k=REDACTED",
		"http://h.test/p?a=1=2":                    "http://h.test/p?a=REDACTED",
		"http://h.test/p?a=1;b=2":                  "http://h.test/p?a=REDACTED",
		"http://h.test/p?%3D=1&x%26y=2":            "http://h.test/p?%3D=REDACTED&x%26y=REDACTED",
		"http://h.test/a%2Fb?x=1":                  "http://h.test/a%2Fb?x=REDACTED",
		"http://[::1]:8080/p?q":                    "http://[::1]:8080/p?q",
		"http://[fe80::1%25en0]/p?k=v":             "http://[fe80::1%25en0]/p?k=REDACTED",
		"http://h.test/p?tok=REDACTED":             "http://h.test/p?tok=REDACTED",
		"/relative/path?token=t":                   "/relative/path?token=REDACTED",
		// A proxy's path that holds its target URL: that URL's userinfo,
		// as String redacts it in text; the path's own '@' and ':' stay.
		"http://proxy.test/fetch/https://admin:hunter2@internal.test/report": "http://proxy.test/fetch/https://REDACTED:REDACTED@internal.test/report",
		"http://h.test/users/me:x@y/http://a.test/":                          "http://h.test/users/me:x@y/http://a.test/",
		// Nothing to redact there: the path stays as sent, escapes and all.
		"http://registry.test/proxy/https://registry.npmjs.org/@scope%2Fpkg": "http://registry.test/proxy/https://registry.npmjs.org/@scope%2Fpkg",
		"http://p.test/fetch/https://admin:pw@i.test/a%2Fb":                  "http://p.test/fetch/https://REDACTED:REDACTED@i.test/a%2Fb",
		// The embedded URL escaped as one path segment.
		"http://p.test/fetch/https%3A%2F%2Fadmin:pw@i.test/x":       "http://p.test/fetch/https%3A%2F%2FREDACTED:REDACTED@i.test/x",
		"http://p.test/fetch/https%3A%2F%2Fadmin%3Apw%40i.test%2Fx": "http://p.test/fetch/https%3A%2F%2FREDACTED:REDACTED%40i.test%2Fx",
		// Escaped twice (url.PathEscape or url.QueryEscape of an escaped
		// URL), as each layer that forwards the target escapes it.
		"http://p.test/fetch/https:%252F%252Fadmin:pw@i.test%252Fx":             "http://p.test/fetch/https:%252F%252FREDACTED:REDACTED@i.test%252Fx",
		"http://p.test/fetch/https%253A%252F%252Fadmin%253Apw%2540i.test%252Fx": "http://p.test/fetch/https%253A%252F%252FREDACTED:REDACTED%2540i.test%252Fx",
		"http://p.test/fetch/https%253A%252F%252Fi.test%252F%2540me":            "http://p.test/fetch/https%253A%252F%252Fi.test%252F%2540me",
		// A lone '%' in another segment ("/50%", sent as "%25") hides nothing.
		"http://p.test/off/50%25/fetch/https%253A%252F%252Fadmin%253Apw%2540i.test%252Fx": "http://p.test/off/50%25/fetch/https%253A%252F%252FREDACTED:REDACTED%2540i.test%252Fx",
		// Opaque URLs: the part before '@' is userinfo whatever the scheme.
		"http:user:pw@h.test/p?x=1":        "http:REDACTED:REDACTED@h.test/p?x=REDACTED",
		"mailto:someone@h.test?subject=hi": "mailto:REDACTED:REDACTED@h.test?subject=REDACTED",
		"urn:isbn:0451450523":              "urn:isbn:0451450523",
	} {
		if got := redact.URL(mustParse(t, in)); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
		// What the library records reads as clean to String (retryinspect
		// reads it back with it): the sanitizer is idempotent, but where
		// String, reading text, takes a path's "me:x@" for a userinfo (it
		// errs toward redacting).
		if again := redact.String(want); again != want && in != "http://h.test/users/me:x@y/http://a.test/" {
			t.Errorf("String(%q) = %q: the sanitizer changes its own output", want, again)
		}
	}
	if got := redact.URL(nil); got != "" {
		t.Errorf("URL(nil) = %q", got)
	}
}

// TestEmbeddedUserinfos: the userinfos of a proxy's target URL, decoded,
// however many times the path escaped it (an error that prints the path
// as sent repeats them escaped).
func TestEmbeddedUserinfos(t *testing.T) {
	for path, want := range map[string][]string{
		"/fetch/https://admin:pw@i.test/x":                         {"admin:pw"},
		"/fetch/https%3A%2F%2Fadmin%3Apw%40i.test%2Fx":             {"admin:pw"},
		"/fetch/https:%252F%252Fadmin:pw@i.test%252Fx":             {"admin:pw"},
		"/fetch/https%253A%252F%252Fadmin%253Apw%2540i.test%252Fx": {"admin:pw"},
		"/fetch/https%3A%2F%2Fadmin%3Apw%40i.test%2Fx/50%":         {"admin:pw"},
		"/a/https://u:1@h/b/https://v:2@k":                         {"u:1", "v:2"},
		"/fetch/https://REDACTED:REDACTED@i.test/x":                nil,
		"/users/me@h.test/x":                                       nil,
		"/fetch/https://i.test/%zz@x":                              nil,
	} {
		if got := redact.EmbeddedUserinfos(path); !slices.Equal(got, want) {
			t.Errorf("EmbeddedUserinfos(%q) = %q, want %q", path, got, want)
		}
		if redact.EmbeddedUserinfo(path) != (len(want) > 0) {
			t.Errorf("EmbeddedUserinfo(%q) = %v", path, !(len(want) > 0))
		}
	}
}

// TestURLBuiltByHand covers fields that url.Parse never fills that way but
// a caller may: userinfo in Opaque ("//user:pw@host/path", the form
// net/url documents for sending an exact path), a query or fragment inside
// Opaque, and userinfo in Host.
func TestURLBuiltByHand(t *testing.T) {
	for _, tc := range []struct {
		u    url.URL
		want string
	}{
		{url.URL{Scheme: "http", Host: "h.test", Opaque: "//user:pw@h.test/a%2Fb"}, "http://REDACTED:REDACTED@h.test/a%2Fb"},
		{url.URL{Scheme: "http", Host: "h.test", Opaque: "//h.test/a", RawQuery: "k=v"}, "http://h.test/a?k=REDACTED"},
		{url.URL{Scheme: "http", Opaque: "//h.test/a?token=t#frag"}, "http://h.test/a?token=REDACTED"},
		{url.URL{Scheme: "http", Host: "user:pw@h.test", Path: "/p"}, "http://REDACTED:REDACTED%40h.test/p"},
		{url.URL{Scheme: "http", Host: "h.test", Path: "/p", User: url.User("alice")}, "http://REDACTED:REDACTED@h.test/p"},
		{url.URL{Scheme: "http", Host: "h.test", Path: "/p", RawFragment: "f", Fragment: "f"}, "http://h.test/p"},
		// A proxy's path that holds its target URL, sent in Opaque.
		{url.URL{Scheme: "http", Host: "p.test", Opaque: "//p.test/fetch/https://user:pw@i.test/x"}, "http://p.test/fetch/https://REDACTED:REDACTED@i.test/x"},
		{url.URL{Scheme: "http", Host: "p.test", Opaque: "//user:pw@p.test/fetch/https://user:pw@i.test/x"}, "http://REDACTED:REDACTED@p.test/fetch/https://REDACTED:REDACTED@i.test/x"},
		{url.URL{Scheme: "http", Host: "p.test", Opaque: "//p.test/fetch/https%3A%2F%2Fuser:pw@i.test/x"}, "http://p.test/fetch/https://REDACTED:REDACTED@i.test/x"},
	} {
		if got := redact.URL(&tc.u); got != tc.want {
			t.Errorf("URL(%#v) = %q, want %q", tc.u, got, tc.want)
		}
		for _, secret := range []string{"user", "pw", "alice", "token=t", "frag"} {
			if strings.Contains(redact.URL(&tc.u), secret) {
				t.Errorf("URL(%#v) repeats %q", tc.u, secret)
			}
		}
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		// Parsable: as URL.
		"https://u:p@h.test/a?x=1#f": "https://REDACTED:REDACTED@h.test/a?x=REDACTED",
		// Its own output stays as it is: a redacted userinfo ends at its
		// '@', whatever '@' a path holds after it.
		"http://p.test/fetch/https://REDACTED:REDACTED@git.test/users/alice@example.com": "http://p.test/fetch/https://REDACTED:REDACTED@git.test/users/alice@example.com",
		"REDACTED:REDACTED@git.test/users/alice@example.com":                             "REDACTED:REDACTED@git.test/users/alice@example.com",
		"": "",
		// Unparsable: cleaned as text.
		"http://h.test/%zz?token=t#frag":     "http://h.test/%zz?token=REDACTED",
		"http://u:p%zz@h.test/?token=t":      "http://REDACTED:REDACTED@h.test/?token=REDACTED",
		"http://u:p#w@h.test/x?token=t":      "http://REDACTED:REDACTED@h.test/x?token=REDACTED",
		"http://[::1/p?x=1&y":                "http://[::1/p?x=REDACTED&y",
		"http://h.test/\x7f?x=1":             "http://h.test/\x7f?x=REDACTED",
		"%zz:pw@host?x=1":                    "REDACTED:REDACTED@host?x=REDACTED",
		"see http://alice:s3cret@h.test/?k=": "see http://REDACTED:REDACTED@h.test/?k=REDACTED",
		"x/http://alice:s3cret@h.test/":      "x/http://REDACTED:REDACTED@h.test/",
		// An '@' that begins a path segment is a path's, port or not.
		"http://localhost:4873/@scope/pkg?v=1": "http://localhost:4873/@scope/pkg?v=REDACTED",
		"https://h.test:8443/users/@me":        "https://h.test:8443/users/@me",
		// One that does not, after a ':', may end a password holding a '/'.
		"amqp://guest:123/SECRET@mq.test/vhost": "amqp://REDACTED:REDACTED@mq.test/vhost",
		// A password that ends in '/', or holds a '?' or '#' after digits.
		"https://user:SECRET/@db.test/x":    "https://REDACTED:REDACTED@db.test/x",
		"https://user:1234?SECRET@h.test/x": "https://REDACTED:REDACTED@h.test/x",
		"https://user:1234#SECRET@h.test/x": "https://REDACTED:REDACTED@h.test/x",
		// An e-mail address in a query or fragment does not end a userinfo.
		"https://h.test:8443?email=a@b.com&token=SECRET":     "https://h.test:8443?email=REDACTED&token=REDACTED",
		"https://h.test?email=a@b.com&at=10:30&token=SECRET": "https://h.test?email=REDACTED&at=REDACTED&token=REDACTED",
		"http://[::1]:80?e=a@b.com&token=SECRET":             "http://[::1]:80?e=REDACTED&token=REDACTED",
		"https://h.test:8443#state=a@b&access_token=SECRET":  "https://h.test:8443",
		"url:https://h.test:8443/cb?s=a@b&token=SECRET":      "url:https://h.test:8443/cb?s=REDACTED&token=REDACTED",
		"https://user:pw/x@h.test/cb?s=a@b&token=SECRET":     "https://REDACTED:REDACTED@h.test/cb?s=REDACTED&token=REDACTED",
		// Found by FuzzTextAroundAURL: a userinfo after each "://", and a
		// query key that holds one.
		"#@=https://usr:SECRET@h.test/p?k=SECRET": "REDACTED:REDACTED@=https://REDACTED:REDACTED@h.test/p?k=REDACTED",
		"?user:SECRET@db:5432,sslmode=disable":    "?REDACTED=REDACTED",
		// A DSN's pairs after its host are not a query: the '@' ends the userinfo.
		"sqlserver://sa:SECRET@db:1433;database=app": "sqlserver://REDACTED:REDACTED@db:1433;database=app",
		"user:SECRET@db:5432,sslmode=disable":        "REDACTED:REDACTED@db:5432,sslmode=disable",
		"https://u:PW#SECRET@h&a":                    "https://REDACTED:REDACTED@h&a",
		"https://u:12?SECRET@h=1/x":                  "https://REDACTED:REDACTED@h=1/x",
		// A "://" after a scheme-less userinfo is its path's or query's.
		"svc:SECRET@h.test/cb?return=https://app.test/": "REDACTED:REDACTED@h.test/cb?return=REDACTED",
		"svc:SECRET@h.test/a://b":                       "REDACTED:REDACTED@h.test/a://b",
		"a:b@c:SECRET@h/x?y=z://":                       "REDACTED:REDACTED@h/x?y=REDACTED",
	} {
		if got := redact.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"retry GET":                            "retry GET",
		"GET":                                  "GET",
		"GET http://alice:pw@h.test/x?token=t": "GET http://REDACTED:REDACTED@h.test/x?token=REDACTED",
		`fetch "https://h.test/a?sig=abc"`:     `fetch "https://h.test/a?sig=REDACTED"`,
		"GET /items?page=2 (retry)":            "GET /items?page=REDACTED (retry)",
		"POST <http://u:p@h/>, then GET":       "POST <http://REDACTED:REDACTED@h/>, then GET",
		// Prose's opening punctuation before a URL without a scheme.
		"clone failed (//ghp_TOKEN@github.com/o/r.git)": "clone failed (//REDACTED:REDACTED@github.com/o/r.git)",
		"x (//bob:pw@h)":  "x (//REDACTED:REDACTED@h)",
		"x (u:TOKEN@h)":   "x (REDACTED:REDACTED@h)",
		"x [//TOKEN@h]":   "x [//REDACTED:REDACTED@h]",
		"x [(//TOKEN@h)]": "x [(//REDACTED:REDACTED@h)]",
		"x [[//TOKEN@h]]": "x [[//REDACTED:REDACTED@h]]",
		// The ']' that closes an IPv6 host is the URL's, not prose's.
		"dial //TOKEN@[::1]":      "dial //REDACTED:REDACTED@[::1]",
		"dial [//TOKEN@[::1]]":    "dial [//REDACTED:REDACTED@[::1]]",
		"what?":                   "what?",
		"ünïcode http://h/?k=v ✓": "ünïcode http://h/?k=REDACTED ✓",
		// A URL holds sub-delimiters of its own (RFC 3986): a comma, a
		// parenthesis or a single quote does not end it.
		`Get "https://g.test/me?fields=id,name&access_token=SECRET": EOF`:        `Get "https://g.test/me?fields=REDACTED&access_token=REDACTED": EOF`,
		"GET https://h.test/s?api_key=k,SECRET&sig=(SECRET)&q=it'sSECRET failed": "GET https://h.test/s?api_key=REDACTED&sig=REDACTED&q=REDACTED failed",
		"GET https://us,er:pa(SECRET)@h.test/x":                                  "GET https://REDACTED:REDACTED@h.test/x",
		`Get "http://[::1]:8080/x?token=SECRET": refused`:                        `Get "http://[::1]:8080/x?token=REDACTED": refused`,
		"(see https://h.test/x?a=SECRET), then retry":                            "(see https://h.test/x?a=REDACTED), then retry",
		// A URL Go quoted ends at its closing quote, whatever it holds.
		`Get "https://h.test/x?token=SE CRET": EOF`:     `Get "https://h.test/x?token=REDACTED": EOF`,
		`Get "https://h.test/x?token=SE\"CRET": EOF`:    `Get "https://h.test/x?token=REDACTED": EOF`,
		"Get \"https://h.test/x?token=SE<CR>E`T\": EOF": `Get "https://h.test/x?token=REDACTED": EOF`,
		// A userinfo without a scheme, with a sub-delimiter before its '@':
		// the user name goes too (an access key's id, a token).
		"login user:pa,SECRET@h.test/x failed": "login REDACTED:REDACTED@h.test/x failed",
		"login user:pa(SECRET)@h.test/x":       "login REDACTED:REDACTED@h.test/x",
		"login AKIASECRET:pw@s3.test/b failed": "login REDACTED:REDACTED@s3.test/b failed",
		"push ghpSECRET@github.test/o/r":       "push REDACTED:REDACTED@github.test/o/r",
		// A word glued before a URL is not its scheme.
		"upstream url:https://svc:SECRET@proxy.test/x refused": "upstream url:https://REDACTED:REDACTED@proxy.test/x refused",
		"proxy:http://svc:SECRET@proxy.test:3128":              "proxy:http://REDACTED:REDACTED@proxy.test:3128",
		// A password that holds a '/'.
		"dial postgres://app:abc/SECRET+x=@db.test:5432/app failed": "dial postgres://REDACTED:REDACTED@db.test:5432/app failed",
		"dial redis://:ab/SECRET@redis.test:6379/0":                 "dial redis://REDACTED:REDACTED@redis.test:6379/0",
		"dial amqp://guest:123/SECRET@mq.test/vhost":                "dial amqp://REDACTED:REDACTED@mq.test/vhost",
		// JSON's escaped slashes.
		`{"upstream":"https:\/\/svc:SECRET@proxy.test\/x?k=SECRET"}`: `{"upstream":"https:\/\/REDACTED:REDACTED@proxy.test\/x?k=REDACTED"}`,
		// A token in a relative reference's fragment; a numbered issue is prose.
		"redirect to /cb#access_token=SECRET": "redirect to /cb",
		"see issue #123":                      "see issue #123",
		// A fragment holds sub-delimiters too: they do not end it.
		"redirect to /cb#state=a,access_token=SECRET": "redirect to /cb",
		"redirect to /cb#(access_token=SECRET)":       "redirect to /cb)",
		"see issues #123, #124 (closed)":              "see issues #123, #124 (closed)",
		// A fragment after a host, or a route, holds sub-delimiters too.
		"redirect to app.test#state,access_token=SECRET":       "redirect to app.test",
		"redirect to #/callback,access_token=SECRET":           "redirect to ",
		"redirect to app.test:8443#k(access_token=SECRET)":     "redirect to app.test:8443)",
		"redirect to #!/callback,access_token=SECRET":          "redirect to ",
		"dial 10.0.0.1:8080#state,access_token=SECRET failed":  "dial 10.0.0.1:8080 failed",
		"dial 10.0.0.1#state,access_token=SECRET failed":       "dial 10.0.0.1 failed",
		"dial localhost:8080#state,access_token=SECRET failed": "dial localhost:8080 failed",
		"dial [::1]:8080#state,access_token=SECRET failed":     "dial [::1]:8080 failed",
		"dial app.test.#state,access_token=SECRET failed":      "dial app.test. failed",
		// A '#' in prose keeps no word whole.
		"release v1.2#3,build=42 failed":        "release v1.2#3,build=42 failed",
		"replica:2#1,leader=true unreachable":   "replica:2#1,leader=true unreachable",
		"commit orders:3#12,offset=1552 failed": "commit orders:3#12,offset=1552 failed",
		"style.color=#fff,size=2 rejected":      "style.color=#fff,size=2 rejected",
		"step 3.1#2(retry=true) failed":         "step 3.1#2(retry=true) failed",
		"shard#3,replica=2: connection refused": "shard#3,replica=2: connection refused",
		"node #4(role=leader) unreachable":      "node #4(role=leader) unreachable",
		"tag #v1.2,build=42 failed":             "tag #v1.2,build=42 failed",
		"color=#fff,size=2 rejected":            "color=#fff,size=2 rejected",
		// An '@' before a query's first value, then a userinfo, in text
		// url.Parse rejects (a control character).
		"dial ?@\x7f=user:SECRET@db:5432,sslmode=disable": "dial REDACTED:REDACTED@db:5432,sslmode=disable",
		"dial x?@\x7f=/user:SECRET@db:5432":               "dial REDACTED:REDACTED@db:5432",
		`Get "svc:SECRET@h/a://b": EOF`:                   `Get "REDACTED:REDACTED@h/a://b": EOF`,
		// A scheme-less password that holds a separator, then a '/'.
		"login user:pSECRET(a/b@h.test/x":          "login REDACTED:REDACTED@h.test/x",
		"dsn user:p'SECRET/x@tcp(h:3306)/db":       "dsn REDACTED:REDACTED@tcp(h:3306)/db",
		"dial postgres://app:SECRET/@db.test:5432": "dial postgres://REDACTED:REDACTED@db.test:5432",
		// A quoted URL without a scheme that holds a space.
		`fetch "h.test/x?token=SE CRET": EOF`: `fetch "h.test/x?token=REDACTED": EOF`,
		// Brackets that close around a URL stay text.
		"[https://h.test/x?a=SECRET] failed": "[https://h.test/x?a=REDACTED] failed",
		"{url: https://h.test/x?a=SECRET}":   "{url: https://h.test/x?a=REDACTED}",
		// Quoted prose is not a URL.
		`She said "hi, how are you? fine" and left`: `She said "hi, how are you? fine" and left`,
	} {
		if got := redact.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// userless is what otelhttp records as url.full: u without its userinfo.
func userless(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// checkClean fails when the sanitized form of u, read back, still carries
// userinfo other than REDACTED:REDACTED, a query value other than REDACTED
// or a fragment; and when Changes(u) is false although URL(u) differs from
// what otelhttp records.
func checkClean(t *testing.T, raw string, u *url.URL) {
	t.Helper()
	got := redact.URL(u)
	if !redact.Changes(u) && got != userless(u) {
		t.Fatalf("Changes(%q) is false, but URL gives %q and otelhttp %q", raw, got, userless(u))
	}
	back, err := url.Parse(got)
	if err != nil {
		return // not a URL any more: nothing structured is left to leak
	}
	if back.User != nil && back.User.String() != redact.Placeholder+":"+redact.Placeholder {
		t.Fatalf("URL(%q) = %q keeps userinfo %q", raw, got, back.User.String())
	}
	if back.Fragment != "" {
		t.Fatalf("URL(%q) = %q keeps a fragment", raw, got)
	}
	for pair := range strings.SplitSeq(back.RawQuery, "&") {
		if _, v, ok := strings.Cut(pair, "="); ok && v != redact.Placeholder {
			t.Fatalf("URL(%q) = %q keeps the query value %q", raw, got, v)
		}
	}
}

// A word that is one of the URLs TextKeeping is told to keep (already
// sanitized: a request's own) stays as written, before prose's
// punctuation too; Text errs toward redacting an '@' after a port. A word
// that only begins with one is read as any other.
func TestTextKeeping(t *testing.T) {
	const own = "https://api.test:8443/users/bob@example.com/profile"
	for in, want := range map[string]string{
		"GET " + own + ": EOF":             "GET " + own + ": EOF",
		`Get "` + own + `": EOF`:           `Get "` + own + `": EOF`,
		"see " + own + ".":                 "see " + own + ".",
		"fetch (" + own + ") failed":       "fetch (" + own + ") failed",
		"fetch <" + own + ">":              "fetch <" + own + ">",
		"fetch '" + own + "'":              "fetch '" + own + "'",
		"url=" + own + " err=EOF":          "url=" + own + " err=EOF",
		"&{URL:" + own + " Err:EOF}":       "&{URL:" + own + " Err:EOF}",
		"map[url:" + own + "]":             "map[url:" + own + "]",
		"&{" + own + " EOF}":               "&{" + own + " EOF}",
		"url='" + own + "'":                "url='" + own + "'",
		"a=b&url=" + own:                   "a=b&url=https://REDACTED:REDACTED@example.com/profile", // not prose's: read as text
		"tok=SECRETVALUE=" + own:           "tok=SECRETVALUE=https://REDACTED:REDACTED@example.com/profile",
		"u:p@" + own:                       "REDACTED:REDACTED@https://REDACTED:REDACTED@example.com/profile", // not prose's: read as text
		"GET " + own + "?token=abc: EOF":   "GET https://REDACTED:REDACTED@example.com/profile?token=REDACTED: EOF",
		"GET https://api.test:pw@evil/x":   "GET https://REDACTED:REDACTED@evil/x",
		"GET https://api.test:8443/u/a@b/": "GET https://REDACTED:REDACTED@b/",
	} {
		if got := redact.TextKeeping(in, own); got != want {
			t.Errorf("TextKeeping(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	if got := redact.Text("GET " + own); got != "GET https://REDACTED:REDACTED@example.com/profile" {
		t.Errorf("Text kept %q", got)
	}
}

// Replacements that overlap are replaced as one, but never one that would
// cut a kept URL where neither alone would: a value that runs into a kept
// URL's start after another value leaves the URL whole.
func TestOverlappingReplacementsLeaveAKeptURLWhole(t *testing.T) {
	const own = "https://api.test/v1?q=REDACTED"
	for _, tc := range []struct{ in, second, want string }{
		{"x secretAAAA" + own + " y", "AAAAhttps", "x REDACTED" + own + " y"},
		// What of the second lies before the kept URL goes with the first.
		{"x secretAAAAzz" + own + " y", "AAAAzzhttps", "x REDACTED" + own + " y"},
		// Where the two together hold the kept URL whole, they go as one.
		{"x secretAAAA" + own + "tail y", "AAAA" + own + "tail", "x REDACTED y"},
	} {
		got := redact.ReplaceSpelled(tc.in, []string{own},
			redact.Replacement{Of: "secretAAAA", With: "REDACTED"}, redact.Replacement{Of: tc.second, With: "REDACTED"})
		if got != tc.want {
			t.Errorf("ReplaceSpelled(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// A value spelled with JSON string escapes of any kind (a server's body
// written with ASCII escapes: \u00e4, a surrogate pair for a rune beyond
// the BMP, \/) is found and replaced exactly where the text spells it; an
// escape JSON does not know, or half a pair alone, is text as written.
func TestReplaceSpelledReadsJSONEscapes(t *testing.T) {
	const secret = "päss/🔑w0rd"
	for in, want := range map[string]string{
		`{"password":"p\u00e4ss\/\ud83d\udd11w0rd"}`:           `{"password":"REDACTED"}`,
		`{"password":"p\u00E4ss/\uD83D\uDD11w0rd","n":1}`:      `{"password":"REDACTED","n":1}`,
		`"{\"password\":\"p\\u00e4ss\\/\\ud83d\\udd11w0rd\"}"`: `"{\"password\":\"REDACTED\"}"`,
		`p\u00e4ss\/\ud83dw0rd \x41 \u00g1 \`:                  `p\u00e4ss\/\ud83dw0rd \x41 \u00g1 \`,
	} {
		if got := redact.ReplaceSpelled(in, nil, redact.Replacement{Of: secret, With: "REDACTED"}); got != want {
			t.Errorf("ReplaceSpelled(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"https://u:p@h.test/a?x=1&y=&z#f", "http://h.test/?", "http://h.test/p?a=1&&b", "mailto:x@y?z=1",
		"http://[::1]:80/a%2Fb?%3D=1", "//h.test/p?q=1", "p?x", "http://h.test/p?&&&=", "http:u:p@h/x",
		"http://h/%zz?token=t", "http://u:p#w@h/?x=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if u, err := url.Parse(raw); err == nil {
			checkClean(t, raw, u)
		}
		// String never leaks a query value that follows '=' in the text.
		out := redact.String(raw)
		if _, q, ok := strings.Cut(out, "?"); ok {
			q, _, _ = strings.Cut(q, "#")
			for pair := range strings.SplitSeq(q, "&") {
				if _, v, ok := strings.Cut(pair, "="); ok && v != redact.Placeholder {
					t.Fatalf("String(%q) = %q keeps the query value %q", raw, out, v)
				}
			}
		}
		if strings.Contains(out, "#") && !strings.Contains(raw, "#") {
			t.Fatalf("String(%q) = %q invents a '#'", raw, out)
		}
		_ = redact.Text(raw)
	})
}

// FuzzTextAroundAURL puts a URL with secrets between any text before and
// after it: Text keeps none. The URLs: a password and a query value; a
// relative reference's fragment holding a comma before a token; a query
// holding an e-mail address before a token, after a port; a password
// holding a '/'.
func FuzzTextAroundAURL(f *testing.F) {
	for i, s := range [][2]string{{"GET ", ""}, {`Get "`, `": EOF`}, {"(", ")"}, {"[", "],"},
		{"url:", " refused"}, {"A:0", ""}, {`{"u":"`, `"}`}, {"x/", "#f"}} {
		f.Add(s[0], s[1], uint8(i))
	}
	urls := []string{
		"https://usr:PWSECRET@h.test/p?k=QSECRET",
		"/cb#state=a,b&access_token=QSECRET",
		"https://h.test:8443?e=a@b.com&k=QSECRET",
		"postgres://app:ab/PWSECRET@db.test:5432/app?sslkey=QSECRET",
		"user:PWSECRET@db:5432,sslmode=disable",
	}
	f.Fuzz(func(t *testing.T, before, after string, which uint8) {
		if strings.Contains(before+after, "SECRET") {
			return
		}
		in := before + urls[int(which)%len(urls)] + after
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Fatalf("Text(%q) = %q keeps a secret", in, out)
		}
	})
}

// pathological are texts whose scan was quadratic in their length: a
// separator before each of many characters that a userinfo may hold,
// ahead of a far '@'; and quotes that backslashes escape, each of which
// was scanned to the end for its closing quote. A server writes such text
// (net/http quotes a malformed status line in its error).
func pathological(n int) map[string]string {
	return map[string]string{
		"separators before a far '@'":             strings.Repeat("(", n) + "@h",
		"commas before a far '@'":                 "u" + strings.Repeat(",", n) + "@h",
		"separators, no '@'":                      strings.Repeat("(", n) + "?",
		"words of a separator, no '@'":            strings.Repeat("x(", n/2) + "?",
		"slashes and separators before a far '@'": strings.Repeat("(a/", n/3) + "@h",
		"path '@'s after a user:pw":               "u:p" + strings.Repeat("/@", n/2),
		"'@'s each before a query's pair":         "https://u:" + strings.Repeat("@a=", n/3),
		"escaped quotes":                          `"` + strings.Repeat(`\"`, n/2) + `"?`,
		"escaped quotes, no closing":              `x "` + strings.Repeat(`\"`, n/2) + "?a=1",
		"'@'s in query keys, then a userinfo":     strings.Repeat("x?@\x7f=/", n/6) + "u:p@h",
		"'#'s before a far '='":                   strings.Repeat("#a", n/2) + "=",
		"'#'s after versions":                     strings.Repeat("a.1#", n/4) + "=",
		"slashes pairs before a far '@'":          strings.Repeat("//a", n/3) + "@h",
		"quotes in an authority before a far '@'": "http://u" + strings.Repeat(`"a`, n/2) + "@h",
		"quotes in a query value":                 "http://h/?a=" + strings.Repeat(`"b`, n/2),
		"backslashes before a value's quote":      "http://h/?a=" + strings.Repeat(`\`, n) + `"`,
		"escaped quotes after an '='":             "http://h/?" + strings.Repeat(`=\"`, n/3),
		"authorities' quotes before a far '@'":    strings.Repeat(`\"http://u"a`, n/12) + "@h",
		"quotes at every level":                   strings.Repeat(`"\"\\\"`, n/8) + "http://h/?a=1",
		"escaped line breaks in a URL":            "http://h/?a=" + strings.Repeat(`\\n"`, n/4),
		"escaped line breaks before slashes":      `"x@y` + strings.Repeat(`\n//a`, n/4) + `"`,
		"userinfos' scheme separators":            "http://" + strings.Repeat("a:b://", n/6) + "@h",
		"invalid port complaints left open":       `Get "http://h.test/x": ` + strings.Repeat(`invalid port "`, n/14),
	}
}

// TestTextIsLinearOnPathologicalText cleans a mebibyte of each
// pathological text: quadratic, each took minutes (BenchmarkTextPathological
// shows the scaling); linear, milliseconds. It also checks that nothing was
// lost but what was redacted.
func TestTextIsLinearOnPathologicalText(t *testing.T) {
	for name, in := range pathological(1 << 20) {
		t.Run(name, func(t *testing.T) {
			out := redact.Text(in)
			if len(out) > len(in)+len(redact.Placeholder)*2+1 {
				t.Fatalf("Text grew a %d-byte text to %d bytes", len(in), len(out))
			}
		})
	}
}

// A mebibyte of userinfos, each after a "://": each is redacted, in one
// scan of the text.
func TestTextRedactsAUserinfoAfterEveryScheme(t *testing.T) {
	n := (1 << 20) / len("a:b@://")
	if got, want := redact.Text(strings.Repeat("a:b@://", n)), strings.Repeat("REDACTED:REDACTED@://", n); got != want {
		t.Fatalf("Text kept %d of %d userinfos", strings.Count(got, "a:b@"), n)
	}
}

// A URL without a scheme ("//host/path", a network-path reference, RFC
// 3986 §4.2) whose userinfo is a token without a password, and whose path
// holds an '@' (an npm scope): url.Parse reads the userinfo, but the '@'
// in the path may end a password holding a '/', so the text is read as
// written, where only "://" began an authority and the token was kept, in
// the word alone, after a field's name and inside fmt's map form. A "//"
// glued after a word's character or in a path is an empty segment, whose
// '@' is the path's ("/v1//alice@example.com", as URL records it).
func TestTextRedactsTheUserinfoOfAURLWithoutAScheme(t *testing.T) {
	for in, want := range map[string]string{
		"//TOKEN@registry.test/@scope/pkg":              "//REDACTED:REDACTED@registry.test/@scope/pkg",
		"GET //TOKEN@registry.test/@scope/pkg: EOF":     "GET //REDACTED:REDACTED@registry.test/@scope/pkg: EOF",
		"url=//TOKEN@h.test/@a":                         "url=//REDACTED:REDACTED@h.test/@a",
		"map[//TOKEN@h.test/@a:1]":                      "map[//REDACTED:REDACTED@h.test/@a:1]",
		"///TOKEN@h.test/@a":                            "///REDACTED:REDACTED@h.test/@a",
		"https://h.test/x?next=//TOKEN@h.test/@a":       "https://h.test/x?next=REDACTED",
		"dial tcp 127.0.0.1:8080: connect: refused //x": "dial tcp 127.0.0.1:8080: connect: refused //x",
		"https://api.test/v1//alice@example.com/p":      "https://api.test/v1//alice@example.com/p",
		"(//TOKEN@h.test/@a)":                           "(//REDACTED:REDACTED@h.test/@a)",
	} {
		if got := redact.Text(in); got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func BenchmarkTextPathological(b *testing.B) {
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10} {
		for name, in := range pathological(n) {
			b.Run(fmt.Sprintf("%s/%dKiB", name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					_ = redact.Text(in)
				}
			})
		}
	}
}

func BenchmarkURL(b *testing.B) {
	u, _ := url.Parse("https://alice:s3cret@api.example.com/v1/items?token=abc&page=2&sort=asc")
	b.ReportAllocs()
	for b.Loop() {
		_ = redact.URL(u)
	}
}

// A target URL escaped whole after a '?' with no "key=" (a redirector's
// "/go?<url>"): Text's doc says "so is the userinfo of a URL a word holds
// escaped ("https%3A%2F%2Fu%3Apw%40h", see redactEmbedded)", and the
// same URL escaped in the path loses its password; after a '?' (or in an
// opaque URL's first segment) it kept it, in Text, String and URL
// (url.full).
func TestAnEscapedTargetURLAsABareQueryKeyLosesItsPassword(t *testing.T) {
	const escaped = "https%3A%2F%2Fadmin%3APWSEKRITQ%40internal.test%2Fx"
	for _, in := range []string{
		"?" + escaped,
		`Get "http://proxy.test/go?` + escaped + `": EOF`,
		"redirect to http://proxy.test/go?" + escaped + " refused",
		"http://proxy.test/go?a=1&" + escaped,
		// an opaque URL holding it before any '/'
		"A:" + escaped + "?0",
		"next:" + escaped + "?",
	} {
		if out := redact.Text(in); strings.Contains(out, "PWSEKRITQ") {
			t.Errorf("Text(%q)\n= %q keeps the password", in, out)
		}
	}
	raw := "http://proxy.test/go?" + escaped
	if out := redact.String(raw); strings.Contains(out, "PWSEKRITQ") {
		t.Errorf("String(%q)\n= %q keeps the password", raw, out)
	}
	u, _ := url.Parse(raw)
	if out := redact.URL(u); strings.Contains(out, "PWSEKRITQ") {
		t.Errorf("URL(%q)\n= %q keeps the password", raw, out)
	}
	// The same target in the path is redacted:
	u, _ = url.Parse("http://proxy.test/go/" + escaped)
	if out := redact.URL(u); strings.Contains(out, "PWSEKRITQ") {
		t.Errorf("control: URL of the path form = %q", out)
	}
}

// A base64 password ends in '=' ("c2VjcmV0cGFzcw=="). A target URL after a
// bare '?' as url.PathEscape writes it (it leaves ':', '@' and '=' as they
// are), or escaped with its '=' left as it is, or not escaped at all: the
// key was cut at the password's '=', held no '@', and was kept, password
// and all. The pair is one key now, replaced. The same URL in the path
// loses its password.
func TestABase64PasswordOfATargetAsABareQueryKeyIsRedacted(t *testing.T) {
	const pw = "c2VjcmV0cGFzcw"
	target := "https://admin:" + pw + "==@internal.test/x"
	for _, raw := range []string{
		"http://proxy.test/go?" + url.PathEscape(target),                              // https:%2F%2Fadmin:c2V…==@internal.test%2Fx
		"http://proxy.test/go?https%3A%2F%2Fadmin%3A" + pw + "==%40internal.test%2Fx", // '=' left as is
		"http://proxy.test/go?a=1&" + url.PathEscape(target) + "&b=2",
		"http://proxy.test/go?" + target, // not escaped
		// the target's own query names a second target with a userinfo (a
		// nested redirect): the key was kept with the password up to its '='
		"http://proxy.test/go?https%3A%2F%2Fadmin%3A" + pw + "==%40internal.test%2Fcb%3Fnext%3Dhttps%3A%2F%2Fu%3Apw2%40h.test",
		"http://proxy.test/go?" + url.PathEscape("https://admin:"+pw+"==@internal.test/cb?next=https://u:pw2@h.test"),
	} {
		if out := redact.String(raw); strings.Contains(out, pw) {
			t.Errorf("String(%q)\n= %q keeps the password", raw, out)
		}
		if u, err := url.Parse(raw); err == nil {
			if out := redact.URL(u); strings.Contains(out, pw) {
				t.Errorf("URL(%q)\n= %q keeps the password", raw, out)
			}
		}
		in := `Get "` + raw + `": EOF`
		if out := redact.Text(in); strings.Contains(out, pw) {
			t.Errorf("Text(%q)\n= %q keeps the password", in, out)
		}
	}
	// control: the same target in the path
	u, _ := url.Parse("http://proxy.test/go/" + url.PathEscape(target))
	if out := redact.URL(u); strings.Contains(out, pw) {
		t.Errorf("control: URL of the path form = %q", out)
	}
}

// TestATargetURLsEscapedQueryStaysThePaths pins what docs/telemetry.md
// says of a path: a target URL's query escaped into it is the path's text,
// kept as sent (only a userinfo there is redacted), while the request's own
// query loses its values.
func TestATargetURLsEscapedQueryStaysThePaths(t *testing.T) {
	for in, want := range map[string]string{
		"http://p.test/fetch/https%3A%2F%2Fh.test%2Fx%3Ftoken%3Dvalue?own=v": "http://p.test/fetch/https%3A%2F%2Fh.test%2Fx%3Ftoken%3Dvalue?own=REDACTED",
		"http://p.test/fetch/https://h.test/x%3Ftoken=value":                 "http://p.test/fetch/https://h.test/x%3Ftoken=value",
		"http://p.test/fetch/https%3A%2F%2Fu%3Apw%40h.test%2Fx%3Ft%3Dvalue":  "http://p.test/fetch/https%3A%2F%2FREDACTED:REDACTED%40h.test%2Fx%3Ft%3Dvalue",
	} {
		if got := redact.URL(mustParse(t, in)); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
		if got := redact.Text("GET " + in); got != "GET "+want {
			t.Errorf("Text(%q) = %q, want %q", "GET "+in, got, "GET "+want)
		}
	}
}
