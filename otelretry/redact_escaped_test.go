// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// a proxy's path holds its target URL, password and all, escaped as
// the caller wrote it (RawPath, which net/http sends as written). A base
// whose error repeats the request-target as sent (RequestURI) must not
// carry the password to the caller's error or to the spans, however the
// path spells its escapes: JavaScript's encodeURIComponent (which leaves
// '!' unescaped), lowercase hex.
func TestAnErrorRepeatingTheSentPathKeepsNoEmbeddedPassword(t *testing.T) {
	for name, raw := range map[string]string{
		"go QueryEscape (control)":   "http://p.test/fetch/" + "https%3A%2F%2Fadmin%3AS3CRETpw%40i.test%2Fx",
		"encodeURIComponent, '!'":    "http://p.test/fetch/" + "https%3A%2F%2Fadmin%3AS3CRET!pw%40i.test%2Fx",
		"lowercase hex":              "http://p.test/fetch/" + "https%3a%2f%2fadmin%3aS3CRETpw%40i.test%2fx",
		"'@' escaped, ':' lowercase": "http://p.test/fetch/" + "https:%2F%2Fadmin%3aS3CRETpw%40i.test%2Fx",
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("proxy refused GET %s", r.URL.RequestURI())
			})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1))
			req := get(t, t.Context(), raw)
			if !strings.Contains(req.URL.RequestURI(), "S3CRET") {
				t.Fatalf("setup: %q", req.URL.RequestURI())
			}
			_, err := tr.RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "S3CRET") {
				t.Errorf("the caller's error keeps the embedded password: %q", err.Error())
			}
			for _, s := range rec.Ended() {
				if strings.Contains(s.Status().Description, "S3CRET") {
					t.Errorf("span %q status keeps the embedded password: %q", s.Name(), s.Status().Description)
				}
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "S3CRET") {
						t.Errorf("span %q attribute %s keeps the embedded password: %q", s.Name(), kv.Key, kv.Value.Emit())
					}
				}
				for _, ev := range s.Events() {
					for _, kv := range ev.Attributes {
						if strings.Contains(kv.Value.Emit(), "S3CRET") {
							t.Errorf("span %q event %s %s keeps the embedded password: %q", s.Name(), ev.Name, kv.Key, kv.Value.Emit())
						}
					}
				}
			}
		})
	}
}

// a proxy path holding two target URLs, the first written plain, the
// second escaped as a path segment: SanitizeURL redacts the first and
// keeps the second's password, in url.full on every span too.
func TestURLFullKeepsNoPasswordOfASecondEscapedTarget(t *testing.T) {
	raw := "http://p.test/x/https://a:b@c.test/https%3A%2F%2Fadmin%3AS3CRET%40i.test"
	if out := otelretry.SanitizeURL(mustURL(t, raw)); strings.Contains(out, "S3CRET") {
		t.Errorf("SanitizeURL(%q) = %q keeps the password", raw, out)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	resp, err := tr.RoundTrip(get(t, t.Context(), raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "S3CRET") {
				t.Errorf("span %q attribute %s = %q keeps the password", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
	}
}

// a *url.Error in the base's error chain naming a proxy URL whose
// target is escaped (a redirect's Location, say): sanitizeErrorText
// replaces it by redact.String of it, which keeps the password.
func TestAURLErrorNamingAnEscapedProxyTargetKeepsNoPassword(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: "http://p.test/fetch/https%3A%2F%2Froot%3AS3CRET%40other.test%2Fy", Err: errors.New("stopped after redirect")}
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1))
	_, err := tr.RoundTrip(get(t, t.Context(), "http://p.test/fetch/https%3A%2F%2Fi.test%2Fx"))
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "S3CRET") {
		t.Errorf("the caller's error keeps the password: %q", err.Error())
	}
	for _, s := range rec.Ended() {
		if strings.Contains(s.Status().Description, "S3CRET") {
			t.Errorf("span %q status keeps the password: %q", s.Name(), s.Status().Description)
		}
	}
}

// leaksOfAFailedOperation runs one operation to raw whose base fails with msg(r) and
// reports every place S3CRET survives: the caller's error, span statuses,
// attributes and events.
func leaksOfAFailedOperation(t *testing.T, raw string, msg func(r *http.Request) string) []string {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("%s", msg(r))
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1))
	_, err := tr.RoundTrip(get(t, t.Context(), raw))
	if err == nil {
		t.Fatal("no error")
	}
	var leaks []string
	if strings.Contains(err.Error(), "S3CRET") || strings.Contains(err.Error(), "CRET") {
		leaks = append(leaks, "error: "+err.Error())
	}
	for _, s := range rec.Ended() {
		if strings.Contains(s.Status().Description, "CRET") {
			leaks = append(leaks, "span "+s.Name()+" status: "+s.Status().Description)
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "CRET") {
				leaks = append(leaks, "span "+s.Name()+" "+string(kv.Key)+": "+kv.Value.Emit())
			}
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				if strings.Contains(kv.Value.Emit(), "CRET") {
					leaks = append(leaks, "span "+s.Name()+" event "+ev.Name+" "+string(kv.Key)+": "+kv.Value.Emit())
				}
			}
		}
	}
	return leaks
}

// JavaScript's encodeURIComponent leaves ! ' ( ) * ~ as they are (the
// CHANGELOG names it, for '!'). An error that names a proxy URL other
// than the request's, its target escaped whole by encodeURIComponent, with
// a password holding a ' ( or ), kept the password: Text split the word
// at the quote or parenthesis before it could see the escaped "://".
func TestAnEncodeURIComponentPasswordWithAQuoteOrParenReachesNoTelemetry(t *testing.T) {
	for _, pw := range []string{"S3'CRET", "S3(CRET", "S3)CRET", "S3!CRET"} {
		t.Run(pw, func(t *testing.T) {
			// encodeURIComponent("https://admin:"+pw+"@other.test/y")
			target := "https%3A%2F%2Fadmin%3A" + pw + "%40other.test%2Fy"
			leaks := leaksOfAFailedOperation(t, "http://p.test/fetch/https%3A%2F%2Fi.test%2Fx", func(*http.Request) string {
				return "proxy redirected to /fetch/" + target + " and gave up"
			})
			for _, l := range leaks {
				t.Errorf("password %q kept: %s", pw, l)
			}
		})
	}
}

// The request's own path holds its target escaped up to four times
// (docs/telemetry.md: "as written or escaped up to four times over, in any
// spelling of its escapes"); a base's error that repeats the path as sent
// must keep no password, at each depth.
func TestAnErrorRepeatingAPathEscapedDeepKeepsNoPassword(t *testing.T) {
	esc := func(s string, n int) string {
		for range n {
			s = strings.NewReplacer("%", "%25", ":", "%3A", "/", "%2F", "@", "%40").Replace(s)
		}
		return s
	}
	for n := 1; n <= 4; n++ {
		for _, lower := range []bool{false, true} {
			t.Run(fmt.Sprintf("escaped %d times lower=%v", n, lower), func(t *testing.T) {
				target := esc("https://admin:S3CRET@i.test/x", n)
				if lower {
					target = strings.ToLower(target[:5]) + strings.NewReplacer("%3A", "%3a", "%2F", "%2f").Replace(target[5:])
				}
				raw := "http://p.test/fetch/" + target
				leaks := leaksOfAFailedOperation(t, raw, func(r *http.Request) string {
					return "proxy refused GET " + r.URL.RequestURI()
				})
				for _, l := range leaks {
					t.Errorf("%s: %s", raw, l)
				}
			})
		}
	}
}

// A proxy's path holds its target URL escaped by url.PathEscape (Go's way
// to put a URL in a path segment: '/' and '?' escaped, ':' '@' '=' kept),
// the target's query holding an e-mail address. The sanitized URL is
// right (url.full), and so must be the error text, which repeats that
// sanitized URL and is sanitized again by redact.Text (it lost the
// proxy's host and named the e-mail's domain as the host).
func TestErrorTextKeepsTheProxyHostWithAnEmailInTheTargetQuery(t *testing.T) {
	target := "https://admin:S3CRET@i.test/x?e=a@b.test"
	raw := "http://p.test/fetch/" + url.PathEscape(target)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	clean := otelretry.SanitizeURL(u)
	host := u.Host

	rec := tracetest.NewSpanRecorder()
	// A base that names the request it failed, as a *url.Error does.
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: io.ErrUnexpectedEOF}
	})
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithMaxAttempts(1),
		otelretry.WithDeadline(5*time.Second))}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d; want an error", resp.StatusCode)
	}
	var rerr *otelretry.Error
	text := err.Error()
	if errors.As(err, &rerr) {
		text = rerr.Error()
	}
	t.Logf("SanitizeURL = %s", clean)
	if strings.Contains(text, "S3CRET") {
		t.Errorf("leak: %s", text)
	}
	if !strings.Contains(text, host) || strings.Contains(text, "REDACTED:REDACTED@b.test") {
		t.Errorf("error text lost the host %s:\n  %s", host, text)
	}
	for _, s := range rec.Ended() {
		if d := s.Status().Description; strings.Contains(d, "Get ") && (!strings.Contains(d, host) || strings.Contains(d, "REDACTED:REDACTED@b.test")) {
			t.Errorf("span %q status lost the host: %s", s.Name(), d)
		}
	}
}

// An error that repeats the request's query, its fragment, or one of their
// values in another spelling than the URL's loses them: a base that names
// a cache entry by the URL escaped whole (once to three times: a value's
// own escape is then four deep), or by its query decoded (a '+' a space),
// a value as url.Values reads it, escaped, quoted or encoded anew. Each
// spelling once kept the values (the query escaped whole or decoded, a '+'
// read back as a space, the URL escaped three times, the fragment).
func TestAnErrorRepeatingTheRequestsQueryInAnySpellingKeepsNoValue(t *testing.T) {
	const (
		presigned = "https://alice:PWSECRET77@bucket.s3.test/obj?X-Amz-Credential=AKIAEXAMPLEKEY%2F20240101%2Fs3&X-Amz-Signature=deadbeefcafe0123&X-Amz-Security-Token=IQoJ+SESSION/TOKEN%3D%3D"
		callback  = "https://app.test/cb?state=abc#access_token=FRAGSECRET123&token_type=bearer"
	)
	escaped := func(times int) func(u *url.URL) string {
		return func(u *url.URL) string {
			s := u.String()
			for range times {
				s = url.QueryEscape(s)
			}
			return s
		}
	}
	token := func(u *url.URL) string { return u.Query().Get("X-Amz-Security-Token") } // "IQoJ SESSION/TOKEN=="
	for name, tc := range map[string]struct {
		raw     string
		spelled func(u *url.URL) string
	}{
		"escaped whole once":          {presigned, escaped(1)},
		"escaped whole twice":         {presigned, escaped(2)},
		"escaped whole three times":   {presigned, escaped(3)},
		"query decoded":               {presigned, func(u *url.URL) string { s, _ := url.QueryUnescape(u.RawQuery); return s }},
		"query path-unescaped":        {presigned, func(u *url.URL) string { s, _ := url.PathUnescape(u.RawQuery); return s }},
		"query encoded anew":          {presigned, func(u *url.URL) string { return u.Query().Encode() }},
		"a value as url.Values reads": {presigned, token},
		"a value query-escaped":       {presigned, func(u *url.URL) string { return url.QueryEscape(token(u)) }},
		"a value path-escaped":        {presigned, func(u *url.URL) string { return url.PathEscape(token(u)) }},
		"a value in lower-case hex":   {presigned, func(u *url.URL) string { return strings.ToLower(url.QueryEscape(token(u))) }},
		"a value quoted":              {presigned, func(u *url.URL) string { return strconv.Quote(token(u)) }},
		"a fragment, escaped whole":   {callback, escaped(1)},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			h := newHarness(t, nil)
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				f, err := os.Open(filepath.Join(dir, tc.spelled(r.URL)))
				if err != nil {
					return nil, fmt.Errorf("cache: %w", err)
				}
				f.Close()
				return nil, errors.New("unreachable")
			}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1))
			_, err := rt.RoundTrip(get(t, t.Context(), tc.raw))
			if err == nil {
				t.Fatal("want the base's error")
			}
			texts := map[string]string{"Error()": err.Error()}
			for _, s := range h.ended() {
				texts["the status of span "+s.Name()] = s.Status().Description
			}
			for where, text := range texts {
				for _, secret := range []string{"PWSECRET77", "AKIAEXAMPLEKEY", "deadbeefcafe0123", "SESSION", "FRAGSECRET"} {
					if strings.Contains(text, secret) {
						t.Errorf("%s keeps %q:\n  %s", where, secret, text)
					}
				}
			}
		})
	}
}

// A query value, a user name or a password that equals another key, a
// part of the host or a path segment is replaced where an error repeats
// it alone, never in the sanitized URL the error repeats beside it: that
// URL keeps its keys, its host and its path (a one-letter user name once
// turned /users/lookup into /REDACTEDsers/lookREDACTEDp).
func TestAQueryValueOrAUserinfoLeavesTheSanitizedURLWhole(t *testing.T) {
	for _, raw := range []string{
		"https://api.test/v1/items?fields=metadata&metadata=full",
		"https://s3.us-east-1.amazonaws.test/b/o?region=us-east-1",
		"https://admin:s3cretPW@intranet.test/admin/users",
		"https://api:s3cretPW@api.example.test/v1/items",
		"https://svc:example@example.test/v1/items",
		"https://token:s3cretPW@api.test/v1/items?token=1",
		"https://u:s3cretPW@api.test/users/lookup",
	} {
		u, _ := url.Parse(raw)
		clean := otelretry.SanitizeURL(u)
		rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection reset")}
		}), otelretry.WithMaxAttempts(1))
		if _, err := rt.RoundTrip(get(t, t.Context(), raw)); err == nil || !strings.Contains(err.Error(), clean) {
			t.Errorf("%s: the error %v does not repeat the sanitized URL %s", raw, err, clean)
		}
	}
}

// The request's own query printed as fmt prints url.Values loses its
// values of 8 bytes or more; a shorter one is text there, as
// docs/telemetry.md says (pinned, so that a change tells the doc).
func TestTheRequestsQueryPrintedAsURLValues(t *testing.T) {
	printed := func(r *http.Request) string { return fmt.Sprintf("bad query %v", r.URL.Query()) }
	if leaks := leaksOfAFailedOperation(t, "https://u:pw@api.test/p?token=S3CRETXY&page=2", printed); len(leaks) > 0 {
		t.Errorf("a value of 8 bytes kept: %q", leaks)
	}
	if leaks := leaksOfAFailedOperation(t, "https://api.test/p?token=S3CRET&page=2", printed); len(leaks) == 0 {
		t.Error("a value of 6 bytes printed as url.Values is now replaced: docs/telemetry.md says it is text there")
	}
}
