// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	semconv120 "go.opentelemetry.io/otel/semconv/v1.20.0"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
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
	} {
		if got := urlLeak(tc.key, tc.value); got != tc.want {
			t.Errorf("urlLeak(%q, %q) = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}
