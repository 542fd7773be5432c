package inspect

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// redacted is the placeholder the transport's sanitizer writes for every
// query value.
const redacted = attrs.Redacted

// isURLKey reports whether an attribute holds a URL or a part of one: any
// key in the URL namespace (url.full, url.query, url.original, ...), a
// legacy key ending in it (http.url) or an HTTP target (http.target).
func isURLKey(key string) bool {
	ns, _, _ := strings.Cut(key, ".")
	last := key[strings.LastIndexByte(key, '.')+1:]
	return ns == urlNamespace || last == urlNamespace || last == "target"
}

// urlParts splits a URL-ish value without requiring it to parse: a full
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
	value, _, _ = strings.Cut(value, "#")
	if bareQuery {
		return urlParts{query: value, hasQuery: value != ""}
	}
	var p urlParts
	if i := strings.Index(value, "://"); i >= 0 {
		p.scheme, value = value[:i+3], value[i+3:]
		end := strings.IndexAny(value, "/?")
		if end < 0 {
			end = len(value)
		}
		if at := strings.LastIndexByte(value[:end], '@'); at >= 0 {
			p.userinfo, p.hasUser, value = value[:at], true, value[at+1:]
		}
	}
	p.rest, p.query, p.hasQuery = strings.Cut(value, "?")
	return p
}

// userinfoLeaks reports userinfo other than REDACTED placeholders.
func (p urlParts) userinfoLeaks() bool {
	if !p.hasUser {
		return false
	}
	for part := range strings.SplitSeq(p.userinfo, ":") {
		if part != "" && part != redacted {
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
		if value == redacted {
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
	p := splitURL(value, last == "query" && !strings.Contains(value, "://"))
	var leaks []string
	if p.userinfoLeaks() {
		leaks = append(leaks, "userinfo")
	}
	if params := p.leakingParams(); len(params) > 0 {
		leaks = append(leaks, fmt.Sprintf("unredacted values of query parameters %s", quoteList(params)))
	}
	return strings.Join(leaks, " and ")
}

// sanitizeURL redacts a URL for display the way the transport must record
// it: no userinfo, no fragment, every query value REDACTED.
func sanitizeURL(value string) string {
	p := splitURL(value, false)
	out := p.scheme + p.rest
	if !p.hasQuery {
		return out
	}
	pairs := strings.Split(p.query, "&")
	for i, pair := range pairs {
		if key, _, ok := strings.Cut(pair, "="); ok {
			pairs[i] = key + "=" + redacted
		}
	}
	return out + "?" + strings.Join(pairs, "&")
}

// checkURLs reports every URL attribute of s that leaks a secret, by key
// (backends reorder attributes). The secret itself never appears in the
// finding.
func (a *analyzer) checkURLs(s *model.Span, g *group) {
	sorted := slices.SortedStableFunc(slices.Values(s.Attributes), func(x, y model.Attribute) int {
		return strings.Compare(x.Key, y.Key)
	})
	for _, attr := range sorted {
		if attr.Value.Type != model.TypeString || !isURLKey(attr.Key) {
			continue
		}
		if leak := urlLeak(attr.Key, attr.Value.Str); leak != "" {
			a.add(g, CodeUnredactedURL, s.SpanID, "%s on %s carries %s", attr.Key, describeSpan(s), leak)
		}
	}
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
