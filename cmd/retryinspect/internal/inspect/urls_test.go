// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strings"
	"testing"

	semconv120 "go.opentelemetry.io/otel/semconv/v1.20.0"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

func TestIsURLKey(t *testing.T) {
	for key, want := range map[string]bool{
		string(attrs.URLFullKey):             true,
		string(semconv.URLQueryKey):          true,
		string(semconv.URLOriginalKey):       true,
		string(semconv120.HTTPURLKey):        true,
		string(semconv120.HTTPTargetKey):     true,
		string(attrs.ServerAddressKey):       false,
		string(attrs.OperationIDKey):         false,
		string(semconv.UserAgentOriginalKey): false,
	} {
		if got := isURLKey(key); got != want {
			t.Errorf("isURLKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestURLLeak(t *testing.T) {
	full, query := string(attrs.URLFullKey), string(semconv.URLQueryKey)
	for _, tc := range []struct {
		key, value, want string
	}{
		{full, "https://api.test/items", ""},
		{full, "https://api.test/items?q=REDACTED&flag&empty=", ""},
		{full, "https://api.test/items?q=REDACTED#frag=secret", ""},
		{full, "https://REDACTED:REDACTED@api.test/", ""},
		{full, "https://user:pw@api.test/", "userinfo"},
		{full, "https://token@api.test/", "userinfo"},
		{full, "https://api.test/a@b?x=1", `unredacted values of query parameters "x"`},
		{full, "https://u:p@api.test/?a=1&b=REDACTED&c=%52EDACTED&d=2", `userinfo and unredacted values of query parameters "a", "d"`},
		{full, "not a url ?%zz=%zz", `unredacted values of query parameters "%zz"`},
		{query, "a=1&b=REDACTED", `unredacted values of query parameters "a"`},
		{query, "b=REDACTED", ""},
		{string(semconv120.HTTPTargetKey), "/items?page=2", `unredacted values of query parameters "page"`},
		{string(semconv.URLPathKey), "/items", ""},
		// The userinfo internal/redact redacts is the one reported: after
		// "//" alone too, and with a password that holds a '/' or a '#'
		// (an AWS secret key holds '/'); a path's '@' is none.
		{string(semconv.URLOriginalKey), "//alice:SECRET@api.test/x", "userinfo"},
		{full, "https://AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG@api.test/x", "userinfo"},
		{full, "https://alice:pa#SECRET@api.test/x", "userinfo"},
		{full, "https://api.test/users/@me", ""},
		{full, "https://api.test:8443/@scope/pkg?v=REDACTED", ""},
		{string(semconv.URLPathKey), "//cdn/a@b", ""},
		{string(semconv120.HTTPTargetKey), "/me:x@y/z?page=2", `unredacted values of query parameters "page"`},
		{full, "", ""},
		// A query value that is a URL is no scheme: the secret after it
		// is found.
		{string(semconv120.HTTPTargetKey), "/oauth/token?redirect_uri=https://app.test/cb&client_secret=S", `unredacted values of query parameters "redirect_uri", "client_secret"`},
		{query, "redirect_uri=https://app.test/cb&client_secret=S", `unredacted values of query parameters "redirect_uri", "client_secret"`},
		{string(semconv.URLOriginalKey), "/login?next=https://app.test/&token=S", `unredacted values of query parameters "next", "token"`},
		{full, "1http://u:p@h/", "userinfo"},
		// A "://" after a '=' or '&' outside the query begins an authority
		// too; a query key that holds an '@' leaks as a userinfo does (the
		// sanitizer replaces it).
		{string(semconv120.HTTPTargetKey), "/go/url=https://admin:pw@internal.test/x", "userinfo"},
		{string(semconv.URLPathKey), "/proxy;target=https://admin:pw@internal.test/", "userinfo"},
		{string(semconv.URLOriginalKey), "/a&b/https://admin:pw@internal.test/", "userinfo"},
		{string(semconv.URLOriginalKey), "/cb?https://admin:pw@internal.test/", "userinfo"},
		{query, "a=REDACTED&https://admin:pw@internal.test/", "userinfo"},
		{full, "https://api.test/cb?page=REDACTED&admin:pw@internal.test", "userinfo"},
		{full, "https://api.test/cb?REDACTED&page=REDACTED", ""},
		// What the library records clean is clean: an '@' in a path after
		// a host and port, a path's own ':' and '@' before a URL it holds,
		// a query key's escaped '@'; a URL in the path with a password is
		// not.
		{full, "http://users.internal:8080/users/alice@example.com", ""},
		{full, "http://h.test/users/me:x@y/http://a.test/", ""},
		{full, "http://api.test/lookup?alice%40example.com", ""},
		{full, "http://p.test/fetch/https://admin:pw@i.test/x", "userinfo"},
		{full, "http://p.test/fetch/https://REDACTED:REDACTED@i.test/x", ""},
	} {
		if got := urlLeak(tc.key, tc.value); got != tc.want {
			t.Errorf("urlLeak(%q, %q) = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}

// An unredacted-url finding names the attribute's key, which comes from
// the input and may be anything: the key is sanitized as any other text
// of the input a finding inserts.
func TestAnUnredactedURLFindingSanitizesTheKey(t *testing.T) {
	at := minimalAttempt("t1", 2, 1, "op1", 1, 0)
	at.Attributes = append(at.Attributes, model.Attribute{Key: "url.full?access_token=SECRET", Value: model.String("https://user:pw@api.test/")})
	r := Analyze([]model.Span{operationSpan("t1", 1, 0, "op1", 1, 0), at})
	found := false
	for _, f := range r.Findings {
		if f.Code == CodeUnredactedURL {
			found = true
			if strings.Contains(f.Seen, "SECRET") {
				t.Errorf("finding reads %q: the key's query value is printed raw", f.Seen)
			}
		}
	}
	if !found {
		t.Fatalf("no unredacted-url finding in %v", codesOf(r))
	}
}
