package otelretry

import (
	"net/url"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
)

// Redacted replaces every query value and credential in recorded URLs.
const Redacted = attrs.Redacted

// SanitizeURL returns u as it may appear in telemetry: userinfo and fragment
// dropped, every query value replaced by REDACTED while keys stay, so a
// reader can still see which parameters were sent. Query keys keep their
// order. A nil URL yields "".
func SanitizeURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	clean := *u
	clean.User = nil
	clean.Fragment, clean.RawFragment = "", ""
	clean.RawQuery, clean.ForceQuery = "", false
	if u.RawQuery == "" {
		return clean.String()
	}
	return appendRedactedQuery(clean.String(), u.RawQuery)
}

// appendRedactedQuery returns prefix + "?" + raw with every value replaced
// by Redacted, in one pre-sized buffer. Pairs are split on '&' only, so
// empty pairs and keys without '=' stay as they were.
func appendRedactedQuery(prefix, raw string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(raw) + (strings.Count(raw, "&")+1)*len(Redacted))
	b.WriteString(prefix)
	b.WriteByte('?')
	for rest, more := raw, true; more; {
		var pair string
		pair, rest, more = strings.Cut(rest, "&")
		key, _, hasValue := strings.Cut(pair, "=")
		b.WriteString(key)
		if hasValue {
			b.WriteByte('=')
			b.WriteString(Redacted)
		}
		if more {
			b.WriteByte('&')
		}
	}
	return b.String()
}

// redactable reports whether otelhttp's url.full for u (u without its
// userinfo) differs from SanitizeURL(u): only a query, a bare '?' or a
// fragment make it differ.
func redactable(u *url.URL) bool {
	return u != nil && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "")
}
