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
	clean.RawQuery = redactQuery(u.RawQuery)
	clean.ForceQuery = false
	return clean.String()
}

func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i, pair := range strings.Split(raw, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		key, _, hasValue := strings.Cut(pair, "=")
		b.WriteString(key)
		if hasValue {
			b.WriteString("=" + Redacted)
		}
	}
	return b.String()
}
