// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// isURLKey reports whether an attribute holds a URL or a part of one: any
// key in the URL namespace (url.full, url.query, url.original, ...), a
// legacy key ending in it (http.url) or an HTTP target (http.target).
func isURLKey(key string) bool {
	ns, _, _ := strings.Cut(key, ".")
	last := key[strings.LastIndexByte(key, '.')+1:]
	return ns == urlNamespace || last == urlNamespace || last == "target"
}

// urlParts splits a URL-ish value without requiring it to parse, to find
// what it leaks (sanitizing is internal/redact's job): a full
// URL ("scheme://userinfo@host/path?query#fragment"), a target
// ("/path?query") or, for query attributes, a bare query.
type urlParts struct {
	scheme   string // up to and including "://"; empty for targets and queries
	userinfo string
	hasUser  bool
	rest     string // host and path, or the path of a target
	query    string
	hasQuery bool
}

func splitURL(value string, bareQuery bool) urlParts {
	if bareQuery {
		value, _, _ = strings.Cut(value, "#")
		return urlParts{query: value, hasQuery: value != ""}
	}
	var p urlParts
	// The authority follows "scheme://", or "//" in a network-path
	// reference; its userinfo is found as internal/redact finds it to
	// redact it (a password may hold a '/', '?' or '#'), before the
	// fragment is cut.
	if sep := authorityAt(value); sep >= 0 {
		full := value
		p.scheme, value = value[:sep], value[sep:]
		if userinfo, rest, hasUser, ok := parsedAuthority(full, value); ok {
			p.userinfo, value, p.hasUser = userinfo, rest, hasUser
		} else {
			p.userinfo, value, p.hasUser = redact.SplitUserinfo(value)
		}
	}
	value, _, _ = strings.Cut(value, "#")
	p.rest, p.query, p.hasQuery = strings.Cut(value, "?")
	return p
}

// parsedAuthority splits the userinfo off rest, the text after full's
// "://" (or "//"), as url.Parse reads full, when that reading leaves no
// doubt: a host, and an authority text that is the host alone or the
// userinfo url.Parse found, '@' and the host. An '@' further on is then in
// the path ("http://h:8080/users/a@b.test", "http://REDACTED:REDACTED@h/@scope"),
// as net/http sends it, not the end of a password that holds a '/', which
// the text alone could not tell. ok is false when it cannot tell.
func parsedAuthority(full, rest string) (userinfo, after string, hasUser, ok bool) {
	u, err := url.Parse(full)
	if err != nil || u.Host == "" {
		return "", "", false, false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	switch authority := rest[:end]; {
	case u.User == nil && strings.IndexByte(authority, '@') < 0:
		return "", rest, false, true
	case u.User != nil && authority == u.User.String()+"@"+u.Host:
		return u.User.String(), rest[len(u.User.String())+1:], true, true
	}
	return "", "", false, false
}

// authorityAt is where value's authority begins: after its first "://"
// (internal/redact redacts a userinfo after any), or after a leading
// "//"; -1 when it has none, or when a '?' or '#' comes first: a URL in
// the query ("?next=https://...") begins no authority, and the query's
// keys and values are checked as such.
func authorityAt(value string) int {
	if strings.HasPrefix(value, "//") {
		return len("//")
	}
	i := strings.Index(value, "://")
	if i < 0 || strings.ContainsAny(value[:i], "?#") {
		return -1
	}
	return i + len("://")
}

// isURL reports whether value begins with a scheme and "://" (RFC 3986:
// a letter, then letters, digits, '+', '-' and '.'): a query attribute
// that holds a whole URL, not a bare query ("next=https://...").
func isURL(value string) bool {
	i := strings.Index(value, "://")
	return i > 0 && strings.IndexFunc(value[:i], func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0 && 'a' <= value[0]|0x20 && value[0]|0x20 <= 'z'
}

// userinfoLeaks reports userinfo other than REDACTED placeholders, in the
// authority, in a URL the path holds, or in a query key: internal/redact
// replaces a key that holds an '@' ("?https://u:pw@h/", "&u:pw@h") as it
// replaces a value.
func (p urlParts) userinfoLeaks() bool {
	for pair := range strings.SplitSeq(p.query, "&") {
		key, _, _ := strings.Cut(pair, "=") // as written: the sanitizer reads a raw '@'
		if strings.IndexByte(key, '@') >= 0 && key != attrs.Redacted {
			return true
		}
	}
	if redact.EmbeddedUserinfo(p.rest) { // a URL in the path, which the sanitizer redacts
		return true
	}
	if !p.hasUser {
		return false
	}
	for part := range strings.SplitSeq(p.userinfo, ":") {
		if part != "" && part != attrs.Redacted {
			return true
		}
	}
	return false
}

// leakingParams returns the keys of query parameters whose value is
// neither empty nor REDACTED.
func (p urlParts) leakingParams() []string {
	var keys []string
	for pair := range strings.SplitSeq(p.query, "&") {
		key, value, ok := strings.Cut(pair, "=")
		if !ok || value == "" {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		if value == attrs.Redacted {
			continue
		}
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if len(key) > 40 {
			key = key[:40] + "..."
		}
		keys = append(keys, key)
	}
	return keys
}

// urlLeak describes what a URL attribute leaks, or returns "".
func urlLeak(key, value string) string {
	last := key[strings.LastIndexByte(key, '.')+1:]
	p := splitURL(value, last == "query" && !isURL(value))
	var leaks []string
	if p.userinfoLeaks() {
		leaks = append(leaks, "userinfo")
	}
	if params := p.leakingParams(); len(params) > 0 {
		leaks = append(leaks, fmt.Sprintf("unredacted values of query parameters %s", quoteList(params)))
	}
	return strings.Join(leaks, " and ")
}

// checkURLs reports every URL attribute of s that leaks a secret, by key
// (backends reorder attributes). The secret itself never appears in the
// finding.
func (a *analyzer) checkURLs(s *model.Span, g *group) {
	// Most spans leak nothing: sort (a copy) only when one does.
	leaks := false
	for _, attr := range s.Attributes {
		if attr.Value.Type == model.TypeString && isURLKey(attr.Key) && urlLeak(attr.Key, attr.Value.Str) != "" {
			leaks = true
			break
		}
	}
	if !leaks {
		return
	}
	sorted := slices.SortedStableFunc(slices.Values(s.Attributes), func(x, y model.Attribute) int {
		return strings.Compare(x.Key, y.Key)
	})
	for _, attr := range sorted {
		if attr.Value.Type != model.TypeString || !isURLKey(attr.Key) {
			continue
		}
		if leak := urlLeak(attr.Key, attr.Value.Str); leak != "" {
			// The key may be anything: quote it, never the value.
			a.add(g, CodeUnredactedURL, s.SpanID, "%s on %s carries %s", quoteKey(attr.Key), describeSpan(s), leak)
		}
	}
}

// quoteList writes items from the input for a message, each sanitized and
// quoted.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(redacted(s))
	}
	return listed(q, ", ")
}

// quoteKey writes an attribute key from the input for a message,
// sanitized: as it is when it is plain, quoted when it holds anything
// unusual.
func quoteKey(key string) string {
	key = redacted(key)
	if strconv.Quote(key) == `"`+key+`"` && !strings.ContainsAny(key, " ") {
		return key
	}
	return strconv.Quote(key)
}
