// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// scrubbedTexts sends one GET of raw through NewTransport over a base that fails
// with mkErr(req), and returns Error() and every span's status text.
func scrubbedTexts(t *testing.T, raw string, mkErr func(*http.Request) error) string {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, mkErr(r) })
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error(): %s\n", err.Error())
	for _, s := range rec.Ended() {
		fmt.Fprintf(&b, "span %s status: %s\n", s.Name(), s.Status().Description)
	}
	return b.String()
}

// A base (a cache in front of the network) reports the entry it missed as
// a *url.Error whose URL is the request's URL escaped whole, as a cache
// names an entry: docs/telemetry.md promises the query's values "in any
// spelling (the URL escaped whole up to three times, as a cache names an
// entry ...)", in a plain error as in a *url.Error, whose sanitized form
// (unchanged: it parses as a path) was once left whole with the value in
// it.
func TestAURLErrorOfTheURLEscapedWholeKeepsNoQueryValue(t *testing.T) {
	const raw = "https://api.test/v1/items?token=QSECRETVALUE42&page=3"
	for name, mk := range map[string]func(*http.Request) error{
		"plain": func(r *http.Request) error {
			return fmt.Errorf("cache %s: %w", url.QueryEscape(r.URL.String()), io.EOF)
		},
		"urlError": func(r *http.Request) error {
			return &url.Error{Op: "Get", URL: url.QueryEscape(r.URL.String()), Err: io.EOF}
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, mk)
			if strings.Contains(got, "QSECRETVALUE42") {
				t.Errorf("query value reached telemetry:\n%s", got)
			}
		})
	}
}

// A base that follows redirects (an http.Client as a RoundTripper) fails
// on the Location the server gave, which repeats the request's token as
// a query key without '=' (keys are kept by the sanitizer) or in the
// path. The token is a query value of 8+ bytes of the request's URL:
// "a value of 8 bytes or more wherever it appears alone, but in the
// sanitized URL beside it" (docs/telemetry.md).
func TestAURLErrorOfAnotherURLKeepsNoQueryValueOfTheRequest(t *testing.T) {
	const raw = "https://api.test/v1/items?token=QSECRETVALUE42"
	for name, loc := range map[string]string{
		"key":  "https://login.test/next?QSECRETVALUE42",
		"path": "https://login.test/t/QSECRETVALUE42",
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, func(*http.Request) error {
				return &url.Error{Op: "Get", URL: loc, Err: errors.New("EOF")}
			})
			if strings.Contains(got, "QSECRETVALUE42") {
				t.Errorf("query value reached telemetry:\n%s", got)
			}
		})
	}
}

// The URL's own password, percent-encoded as url.QueryEscape writes it
// (a form a base posts), outside any URL: "A base's or a hook's error
// that prints the request it was given loses its URL's userinfo,
// percent-encoded or not" (docs/telemetry.md).
func TestThePasswordInAnySpellingReachesNoTelemetry(t *testing.T) {
	const pw = "pa$s/w rd!X9"
	raw := "https://" + url.UserPassword("alice", pw).String() + "@api.test/v1"
	for name, spelled := range map[string]string{
		"query":     url.QueryEscape(pw),
		"lowerhex":  strings.ReplaceAll(url.QueryEscape(pw), "%2F", "%2f"),
		"escaped2x": url.QueryEscape(url.QueryEscape(pw)),
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, func(*http.Request) error {
				return fmt.Errorf("token endpoint refused grant_type=password&username=alice&password=%s", spelled)
			})
			if strings.Contains(got, spelled) {
				t.Errorf("password (%q) reached telemetry:\n%s", spelled, got)
			}
		})
	}
}

// FuzzAQueryValueInAnySpelling found: a query value written as it is
// ("000%0000", the URL holding it escaped) was mostly kept
// when a decoded form of it is found earlier in the text and overlaps
// it: ReplaceSpelled replaced the first span and dropped the overlapping
// one, whose tail stayed. Both are replaced as one now. Sent through a
// Transport.
func TestOverlappingSpellingsOfAValueAreReplacedAsOne(t *testing.T) {
	raw := "https://api.test/x?k=" + url.QueryEscape("000%0000") + "&other=1"
	got := scrubbedTexts(t, raw, func(*http.Request) error {
		return errors.New("id 000\x00" + "000%0000" + " rejected")
	})
	if strings.Contains(got, "0%0000 rejected") {
		t.Errorf("value's tail reached telemetry:\n%q", got)
	}
}

// A PrepareAttemptFunc signs the URL (adds a query value); a cache in
// front of the network names the entry it missed by the prepared URL
// escaped whole. docs/telemetry.md: the error "loses ... its query, its
// fragment and their values in any spelling (the URL escaped whole up to
// three times, as a cache names an entry, ...)"; hooks.go: "the spans,
// logs and errors record its [the prepared request's] sanitized URL".
// Without the prepare step the same short value is replaced (control);
// with it, the caller's URL, taken first, changed the text the prepared
// URL's query was looked for in, and the short value stayed.
func TestAPreparedURLEscapedWholeKeepsNoQueryValue(t *testing.T) {
	const raw = "https://api.test/v1/items?token=QSECRETVALUE42"
	for name, prepare := range map[string]bool{"control": false, "prepared": true} {
		t.Run(name, func(t *testing.T) {
			opts := []otelretry.Option{otelretry.WithMaxAttempts(1)}
			target := raw
			if prepare {
				opts = append(opts, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
					r.URL.RawQuery += "&sig=k9Zq"
					return nil
				}))
			} else {
				target = raw + "&sig=k9Zq"
			}
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("cache miss for %s: %w", url.QueryEscape(r.URL.String()), io.EOF)
			}), opts...)
			_, err := rt.RoundTrip(get(t, t.Context(), target))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "k9Zq") || strings.Contains(err.Error(), "QSECRETVALUE42") {
				t.Errorf("a query value reached the error:\n%v", err)
			}
		})
	}
}

// net/http's Client puts the request's URL in its *url.Error with the
// password as "***"; a base that wraps that error with %v keeps the text
// and loses the chain. The user name was then replaced in the request's
// own URL too (its sanitized form was not in the text to be left whole):
// /admin/users read /REDACTED/users.
func TestTheClientsPrintedURLLeavesTheSanitizedURLWhole(t *testing.T) {
	const raw = "https://admin:s3cretpassw0rd@api.test/admin/users/lookup?id=42"
	const want = "https://REDACTED:REDACTED@api.test/admin/users/lookup?id=REDACTED"
	for name, wrap := range map[string]string{"%v": "upstream: %v", "%w": "upstream: %w"} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, func(r *http.Request) error {
				printed := strings.Replace(r.URL.String(), "admin:s3cretpassw0rd@", "admin:***@", 1)
				return fmt.Errorf(wrap, &url.Error{Op: "Get", URL: printed, Err: io.EOF})
			})
			for _, line := range urlLines(got) {
				if !strings.Contains(line, want) || strings.Contains(line, "s3cret") {
					t.Errorf("want %q whole, no password, in every text:\n%s", want, got)
				}
			}
		})
	}
}

// A fragment of any length is replaced after its '#' in the request's URL
// escaped whole (a cache's entry name), as the query after its '?' is:
// docs/telemetry.md promises "its query, its fragment and their values in
// any spelling (the URL escaped whole ...)". One of under 8 bytes was kept;
// then one written as it is in the error's prose was replaced too
// ("certificate #1" for a URL ending in "#1").
func TestAShortFragmentOfTheURLEscapedWholeReachesNoTelemetry(t *testing.T) {
	for _, raw := range []string{"https://api.test/cb#Zq7wK2", "https://api.test/cb?x=1#k=Zq7"} {
		got := scrubbedTexts(t, raw, func(r *http.Request) error {
			return fmt.Errorf("cache miss for %s: %w", url.QueryEscape(r.URL.String()), io.EOF)
		})
		if strings.Contains(got, "Zq7") {
			t.Errorf("%s: the fragment reached telemetry:\n%s", raw, got)
		}
	}
	got := scrubbedTexts(t, "https://api.test/docs/page#1", func(r *http.Request) error {
		return fmt.Errorf("cache miss for %s: tls: failed to parse certificate #1 in the chain", url.QueryEscape(r.URL.String()))
	})
	for _, line := range urlLines(got) {
		if !strings.Contains(line, "certificate #1 in the chain") || strings.Contains(line, "%231") {
			t.Errorf("want the escaped fragment replaced, the error's own text kept:\n%s", got)
		}
	}
}

// A body's read error that is a *url.Error of the request's own URL names
// it as url.full does, as an attempt's error does: the URL with a port and
// an '@' in its path read as text named another host, in the error the
// caller reads (errors.As) and in the span's status.
func TestABodysURLErrorNamesTheRequestsURLAsKnown(t *testing.T) {
	const raw = "https://api.test:8443/users/bob@example.com/profile?token=QSECRETVALUE42"
	const want = "https://api.test:8443/users/bob@example.com/profile?token=REDACTED"
	rec := tracetest.NewSpanRecorder()
	tr := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body := errAfter("partial", &url.Error{Op: "Get", URL: r.URL.String(), Err: io.ErrUnexpectedEOF})
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body, Request: r}, nil
	}), otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), otelretry.WithMaxAttempts(1))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	var ue *url.Error
	if !errors.As(err, &ue) || ue.URL != want || !strings.Contains(err.Error(), want) {
		t.Errorf("read error %q: want a *url.Error naming %q", err, want)
	}
	for _, s := range rec.Ended() {
		if d := s.Status().Description; strings.Contains(d, "example.com/profile") && !strings.Contains(d, want) {
			t.Errorf("span %q status %q: want %q", s.Name(), d, want)
		}
	}
}

// An '@' in the path after a port reads, in text, as the end of a userinfo
// ("api.test:8443/users/bob" a user and a password). The request's own URL
// is known: its errors name it as SanitizeURL and url.full do, not as
// "https://REDACTED:REDACTED@example.com/profile", another host, in
// prose's punctuation too.
func TestAnAtInThePathLeavesTheRequestsURLWhole(t *testing.T) {
	const raw = "https://api.test:8443/users/bob@example.com/profile"
	for name, mk := range map[string]func(*http.Request) error{
		"urlError":    func(r *http.Request) error { return &url.Error{Op: "Get", URL: r.URL.String(), Err: io.EOF} },
		"plain":       func(r *http.Request) error { return fmt.Errorf("GET %s: %w", r.URL, io.EOF) },
		"parentheses": func(r *http.Request) error { return fmt.Errorf("fetch failed (%s): %w", r.URL, io.EOF) },
		"angles":      func(r *http.Request) error { return fmt.Errorf("fetch <%s> failed: %w", r.URL, io.EOF) },
		"quotes":      func(r *http.Request) error { return fmt.Errorf("fetch '%s' failed: %w", r.URL, io.EOF) },
		"key":         func(r *http.Request) error { return fmt.Errorf("url=%s err=%w", r.URL, io.EOF) },
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, mk)
			for _, line := range urlLines(got) {
				if !strings.Contains(line, raw) || strings.Contains(line, "REDACTED") {
					t.Errorf("want %q whole in every text:\n%s", raw, got)
				}
			}
		})
	}
}

// urlLines are the lines of scrubbedTexts' output that repeat the base's
// error: Error() and the attempt span's status.
func urlLines(texts string) []string {
	var lines []string
	for _, line := range strings.Split(texts, "\n") {
		if strings.HasPrefix(line, "Error(): ") || strings.HasPrefix(line, "span GET status: ") {
			lines = append(lines, line)
		}
	}
	return lines
}

// A PrepareAttemptFunc that sends through a gateway puts the caller's URL
// in the query, beside a short value: the caller's sanitized URL, kept
// whole, kept the whole query with it (482913, under 8 bytes, is replaced
// only as part of the query).
func TestAPreparedQueryHoldingTheCallersURLKeepsNoValue(t *testing.T) {
	for name, printed := range map[string]func(*http.Request) string{
		"as written": func(r *http.Request) string { return r.URL.RawQuery },
		"decoded":    func(r *http.Request) string { q, _ := url.QueryUnescape(r.URL.RawQuery); return q },
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("gateway refused %s: %w", printed(r), io.EOF)
			}), otelretry.WithMaxAttempts(1), otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
					r.URL.Path, r.URL.RawQuery = "/gateway", "target=https://api.test/v1&otp=482913"
					return nil
				}))
			_, err := rt.RoundTrip(get(t, t.Context(), "https://api.test/v1"))
			texts := []string{fmt.Sprint(err)}
			for _, s := range rec.Ended() {
				texts = append(texts, s.Status().Description)
			}
			if err == nil || strings.Contains(strings.Join(texts, "\n"), "482913") {
				t.Errorf("the query's value reached telemetry:\n%s", strings.Join(texts, "\n"))
			}
		})
	}
}

// fmt prints a pointer to a struct as "&{URL:...}" and a map as
// "map[url:...]": the request's own URL there is named as url.full names
// it, not as another host.
func TestTheRequestsURLInFmtsFormsIsLeftWhole(t *testing.T) {
	const raw = "https://api.test:8443/users/bob@example.com/profile"
	type failure struct {
		URL string
		Err error
	}
	for name, format := range map[string]func(*http.Request) error{
		"pointer %+v": func(r *http.Request) error { return fmt.Errorf("fetch: %+v", &failure{r.URL.String(), io.EOF}) },
		"pointer %v":  func(r *http.Request) error { return fmt.Errorf("fetch: %v", &failure{r.URL.String(), io.EOF}) },
		"map":         func(r *http.Request) error { return fmt.Errorf("fetch: %v", map[string]string{"url": r.URL.String()}) },
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, raw, format)
			for _, line := range urlLines(got) {
				if !strings.Contains(line, raw) || strings.Contains(line, "REDACTED") {
					t.Errorf("want %q whole in every text:\n%s", raw, got)
				}
			}
		})
	}
}

// encoding/json writes a URL's '&' as \u0026, a '"' as \", a '\' as \\:
// a base that reports the request JSON-encoded (the URL, or its query's
// values) spells its query, its fragment and their values so, and kept
// them (those under 8 bytes are replaced only as part of the query or the
// fragment). Each replacement is searched in its JSON spellings now.
func TestTheURLJSONEncodedKeepsNoSecret(t *testing.T) {
	for name, tc := range map[string]struct {
		raw, secret string
		marshal     func(*http.Request) any
	}{
		"query":            {"https://api.test/v1/verify?otp=482913&page=2", "482913", func(r *http.Request) any { return r.URL }},
		"query with quote": {`https://api.test/v1/verify?where={"s":"o"}&otp=482913`, "482913", func(r *http.Request) any { return r.URL }},
		"query with backslash": {`https://api.test/v1/verify?dir=C:\temp&otp=482913`, "482913",
			func(r *http.Request) any { return r.URL }},
		"fragment":      {"https://api.test/v1/cb#otp=4829&x=1", "4829", func(r *http.Request) any { return r.URL }},
		"value alone":   {"https://api.test/v1?token=Zq7%26Kp2mW9xR4v&page=2", "Kp2mW9xR4v", func(r *http.Request) any { return r.URL.Query() }},
		"value with <":  {"https://api.test/v1?token=Zq7%3CKp2mW9xR4v&page=2", "Kp2mW9xR4v", func(r *http.Request) any { return r.URL.Query() }},
		"value with \"": {"https://api.test/v1?token=Zq7%22Kp2mW9xR4v&page=2", "Kp2mW9xR4v", func(r *http.Request) any { return r.URL.Query() }},
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, tc.raw, func(r *http.Request) error {
				b, err := json.Marshal(tc.marshal(r))
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Errorf("upstream rejected %s: %w", b, io.EOF)
			})
			if strings.Contains(got, tc.secret) {
				t.Errorf("%q reached telemetry:\n%s", tc.secret, got)
			}
		})
	}
}

// A PrepareAttemptFunc that sends through a gateway, its query's value
// the caller's URL, fails naming the caller's URL: the URL is named as
// url.full names it, not replaced as the gateway query's value (a value
// that is the kept URL alone leaves it; one around it goes, as above).
func TestTheCallersURLAsAPreparedQueryValueIsLeftWhole(t *testing.T) {
	const raw = "https://api.test/v1/items"
	for name, query := range map[string]func(string) string{
		"escaped":    func(u string) string { return "target=" + url.QueryEscape(u) },
		"as written": func(u string) string { return "target=" + u + "&otp=482913" },
	} {
		t.Run(name, func(t *testing.T) {
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, io.EOF }),
				otelretry.WithMaxAttempts(1), otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
					caller := r.URL.String()
					r.URL.Path, r.URL.RawQuery = "/gateway", query(caller)
					return fmt.Errorf("gateway token for %s: token expired", caller)
				}))
			_, err := rt.RoundTrip(get(t, t.Context(), raw))
			if err == nil || !strings.Contains(err.Error(), "gateway token for "+raw+": token expired") || strings.Contains(err.Error(), "482913") {
				t.Errorf("err %v; want the caller's URL whole", err)
			}
		})
	}
}

// A base that reports the headers it sent as JSON spells a credential's
// value so: Digest's quoted response hash as \"…\", a cookie's '&' as
// \u0026, an API key's '<' as \u003c. Each value and part is replaced in
// its JSON spellings too, as written it was already.
func TestACredentialHeaderJSONEncodedReachesNoTelemetry(t *testing.T) {
	for name, tc := range map[string]struct{ header, value, secret string }{
		"digest":    {"Authorization", `Digest username="alice", realm="api", nonce="dcd98b7102dd2f0e8b11", response="6629fae49393a05397450978507c4ef1"`, "6629fae49393a05397450978507c4ef1"},
		"cookie &":  {"Cookie", `sid=Xk9Pq7Zr&Wm5Lt8Hv2Qn`, "Wm5Lt8Hv2Qn"},
		"api key <": {"X-Api-Key", `k3yQ9vB2<zT7mW4pL8`, "zT7mW4pL8"},
	} {
		for how, marshal := range map[string]func(*http.Request) any{
			"the headers": func(r *http.Request) any { return r.Header },
			"the value":   func(r *http.Request) any { return r.Header.Get(tc.header) },
		} {
			t.Run(name+", "+how, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					b, _ := json.Marshal(marshal(r))
					return nil, fmt.Errorf("upstream rejected %s: %w", b, io.EOF)
				}), otelretry.WithMaxAttempts(1), otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
				req := get(t, t.Context(), "https://api.test/v1/x")
				req.Header.Set(tc.header, tc.value)
				_, err := rt.RoundTrip(req)
				texts := []string{fmt.Sprint(err)}
				for _, s := range rec.Ended() {
					texts = append(texts, s.Status().Description)
				}
				if got := strings.Join(texts, "\n"); err == nil || strings.Contains(got, tc.secret) {
					t.Errorf("%q reached telemetry:\n%s", tc.secret, got)
				}
			})
		}
	}
}

// A value inside a JSON string in a spelling of its own: the request's URL
// or query marshalled and the result marshalled again ('&' as \\u0026), a
// userinfo percent-escaped by Userinfo.String and then marshalled ('&' as
// \u0026 beside '"' as %22). No spelling of the value alone matches
// either; the text is read with its JSON escapes decoded, once and twice.
func TestAValueInANestedSpellingOfJSONReachesNoTelemetry(t *testing.T) {
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, tc := range map[string]struct {
		raw, secret string
		print       func(*http.Request) string
	}{
		"the URL marshalled twice": {"https://api.test/v1/verify?otp=482913&page=2", "482913",
			func(r *http.Request) string { return marshal(marshal(r.URL)) }},
		"the query marshalled twice": {"https://api.test/v1?token=Zq7%26Kp2mW9xR4v&page=2", "Kp2mW9xR4v",
			func(r *http.Request) string { return marshal(marshal(r.URL.Query())) }},
		"the userinfo escaped, then marshalled": {"https://alice:Zq7%26Kp%22mW9xR4v@api.test/v1", "mW9xR4v",
			func(r *http.Request) string { return marshal(r.URL.User.String()) }},
		"the userinfo escaped, then marshalled twice": {"https://alice:Zq7%26Kp%22mW9xR4v@api.test/v1", "mW9xR4v",
			func(r *http.Request) string { return marshal(marshal(r.URL.User.String())) }},
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, tc.raw, func(r *http.Request) error {
				return fmt.Errorf("upstream rejected %s: %w", tc.print(r), io.EOF)
			})
			if strings.Contains(got, tc.secret) {
				t.Errorf("%q reached telemetry:\n%s", tc.secret, got)
			}
			if !strings.Contains(got, "upstream rejected") || !strings.Contains(got, "EOF") {
				t.Errorf("the error's own text was lost:\n%s", got)
			}
		})
	}
}

// A value inside a JSON string that is then percent-escaped (a JSON
// document put in a query value or a cache key, printed escaped).
// docs/telemetry.md: the query, fragment, userinfo "and their values in
// any spelling (the URL escaped whole up to three times, ..., or inside a
// JSON string, marshalled once or twice, with any of JSON's escapes ...)".
// JSON escapes were decoded only in the text as written, never after a
// percent-decoding, so a JSON string escaped whole kept values whose JSON
// spelling is not the one encoding/json writes once: each level of the
// text decodes both now.
func TestAValueInAPercentEscapedJSONStringReachesNoTelemetry(t *testing.T) {
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// A JSON encoder that escapes '/' (PHP's json_encode, by default) or
	// every non-ASCII rune (Python's json.dumps, by default).
	phpJSON := func(v any) string { return strings.ReplaceAll(marshal(v), "/", `\/`) }
	pyJSON := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r > 0x7e {
				fmt.Fprintf(&b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	for name, tc := range map[string]struct {
		raw, secret string
		print       func(*http.Request) string
	}{
		"the query marshalled twice, then escaped": {"https://api.test/v1?token=Zq7%26Kp2mW9xR4v&page=2", "Kp2mW9xR4v",
			func(r *http.Request) string { return url.QueryEscape(marshal(marshal(r.URL.Query()))) }},
		"the userinfo escaped, marshalled twice, then escaped": {"https://alice:Zq7%26Kp%22mW9xR4v@api.test/v1", "mW9xR4v",
			func(r *http.Request) string { return url.QueryEscape(marshal(marshal(r.URL.User.String()))) }},
		"the query as JSON with '/' escaped, then escaped": {"https://api.test/v1?token=Zq7%2FKp2mW9xR4v&page=2", "Kp2mW9xR4v",
			func(r *http.Request) string { return url.QueryEscape(phpJSON(r.URL.Query())) }},
		"the query as ASCII-only JSON, then escaped": {"https://api.test/v1?token=Zq7%C3%A4Kp2mW9xR4v&page=2", "Kp2mW9xR4v",
			func(r *http.Request) string { return url.QueryEscape(pyJSON(marshal(r.URL.Query()))) }},
	} {
		t.Run(name, func(t *testing.T) {
			got := scrubbedTexts(t, tc.raw, func(r *http.Request) error {
				return fmt.Errorf("cache miss for key=%s: %w", tc.print(r), io.EOF)
			})
			if strings.Contains(got, tc.secret) {
				t.Errorf("%q reached telemetry:\n%s", tc.secret, got)
			}
		})
	}
}

// A credential header's value inside a JSON string written with one of
// JSON's escapes other than encoding/json's ('/' as \/, as PHP's
// json_encode writes it; the same text a query value in that spelling
// lost). Each value and part was looked for as written and as
// encoding/json writes it only; they are replaced with the URL's secrets
// now, in every spelling those are.
func TestACredentialHeaderInJSONWithEscapedSlashesReachesNoTelemetry(t *testing.T) {
	const token = "eyJhbGciOiJIUzI1NiJ9.Zq7/Kp2mW9xR4v/Lt8Hv2Qn"
	for name, header := range map[string]string{
		"bearer":  "Bearer " + token,
		"api key": token,
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b, _ := json.Marshal(r.Header)
				php := strings.ReplaceAll(string(b), "/", `\/`)
				return nil, fmt.Errorf("upstream rejected %s: %w", php, io.EOF)
			}), otelretry.WithMaxAttempts(1), otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
			req := get(t, t.Context(), "https://api.test/v1/x")
			req.Header.Set("Authorization", header)
			_, err := rt.RoundTrip(req)
			texts := []string{fmt.Sprint(err)}
			for _, s := range rec.Ended() {
				texts = append(texts, s.Status().Description)
			}
			got := strings.Join(texts, "\n")
			for _, part := range []string{"Zq7", "Kp2mW9xR4v", "Lt8Hv2Qn"} {
				if strings.Contains(got, part) {
					t.Errorf("%q of the Authorization header reached telemetry:\n%s", part, got)
					break
				}
			}
		})
	}
}

// docs/telemetry.md: a base's error loses the query's values "in any
// spelling (the URL escaped whole ..., or its query decoded, ...); a value
// of 8 bytes or more wherever it appears alone, but in the sanitized URL
// beside it; not an escaped value right after a '%' that its first bytes
// complete into an escape". A value escaped once more, written right after
// a backslash (a Windows path), whose first byte makes a JSON escape with
// it (\t, \n, \r, \b, \f, \/, \u+4 hex): decoding JSON and percent
// escapes together ate that byte at the level the value needs; the
// percent-only decodings are read beside them.
func TestAValueAfterABackslashInAnEscapedSpellingReachesNoTelemetry(t *testing.T) {
	for _, tc := range []struct{ raw, secret string }{
		{"https://api.test/v1?token=tok_8f3a%2Fb9cQx7&page=2", "8f3a"},
		{"https://api.test/v1?session=rt-Kp2mW9%2BxR4vLt8", "Kp2mW9"},
		{"https://api.test/v1?key=nqZ7%3DKp2mW9xR4v", "Kp2mW9"},
		{"https://api.test/v1?sig=bf0c%2Fa1d2e3f4a5b6", "a1d2e3f4"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got := scrubbedTexts(t, tc.raw, func(r *http.Request) error {
				_, v, _ := strings.Cut(strings.Split(r.URL.RawQuery, "&")[0], "=")
				// A cache on Windows names its file by the value as sent.
				return fmt.Errorf(`open C:\cache\%s: %w`, url.PathEscape(v), io.ErrUnexpectedEOF)
			})
			if strings.Contains(got, tc.secret) {
				t.Errorf("%q reached telemetry:\n%s", tc.secret, got)
			}
		})
	}
}

// A query value marshalled twice (docs/telemetry.md: "inside a JSON
// string, marshalled once or twice"), its decoded form ending in '%' and
// followed in the error by text that begins with two hex digits: where
// JSON and percent escapes were decoded only together, the value's '%'
// and the text after it decoded as one escape at the only level where
// its JSON escapes were undone. The text is read with its JSON escapes
// alone decoded too.
func TestAValueMarshalledTwiceBeforeHexDigitsReachesNoTelemetry(t *testing.T) {
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const raw = "https://api.test/v1?coupon=Zq7%22Kp2mW9xR4v%25&page=2" // coupon = `Zq7"Kp2mW9xR4v%`
	got := scrubbedTexts(t, raw, func(r *http.Request) error {
		v := r.URL.Query().Get("coupon")
		inner := func(s string) string { m := marshal(s); return m[1 : len(m)-1] } // a JSON string's content
		twice := inner(inner(v))                                                   // Zq7\\\"Kp2mW9xR4v%
		return fmt.Errorf("rejected %s20 off: %w", twice, io.EOF)
	})
	if strings.Contains(got, "Kp2mW9xR4v") {
		t.Errorf("the coupon's value reached telemetry:\n%s", got)
	}
}
