// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package redact is the one URL sanitizer of the repository: the library
// records URLs through it and retryinspect displays them through it, so
// both agree on what a clean URL is. It follows the semantic conventions
// for url.full: credentials become REDACTED:REDACTED, every query value
// becomes REDACTED while the keys and their order stay (a reader can still
// see which parameters were sent), and the fragment is dropped.
//
// URL's output is read again by String and Text as written, but where a
// path holds a ':' before an '@' (a password holding a '/' reads so, and
// so does a host with a port before a path holding an '@':
// h:8443/users/a@b), where an IPv6 host precedes such a path, or where a
// reference without a host holds an '@': the text's reading errs toward
// redacting, and may take that part for a userinfo. So does URL's own
// reading of a proxy's target URL in a path: a ':' before an '@' in the
// target's path ("/fetch/https://h/img/w:s@2x.png") is taken for a
// userinfo that holds a '/', and the target's host goes with it.
//
// It uses the standard library only, so that the library's dependencies
// stay those of OpenTelemetry.
package redact

import (
	"cmp"
	"encoding/json"
	"math"
	"math/bits"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Placeholder replaces every credential and query value. attrs.Redacted is
// this constant, so that it is spelled once.
const Placeholder = "REDACTED"

// credentials is what userinfo of any shape becomes: the semantic
// conventions' form, whether or not a password was present, so that the
// output does not even tell.
const credentials = Placeholder + ":" + Placeholder

// redactedUser is the userinfo URL writes. A *url.Userinfo is immutable, so
// one value serves every call.
var redactedUser = url.UserPassword(Placeholder, Placeholder)

// URL returns u as it may appear in telemetry. Userinfo becomes
// REDACTED:REDACTED, also when it is carried in u.Opaque ("//user:pw@host/p",
// as net/url documents it, "user:pw@host", or an absolute URL,
// "http://user:pw@host/p", which net/http sends as the request's target)
// or, in a URL built by hand, in
// u.Host; every query value becomes REDACTED (pairs are split on '&' only,
// so empty pairs and keys without '=' stay as they were); the fragment and
// a bare '?' are dropped. A nil URL yields "".
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	clean := *u
	if u.User != nil {
		clean.User = redactedUser
	}
	clean.Fragment, clean.RawFragment = "", ""
	clean.RawQuery, clean.ForceQuery = "", false
	if u.Opaque != "" {
		clean.Opaque = opaque(u.Opaque)
	}
	if at := strings.LastIndexByte(u.Host, '@'); at >= 0 {
		clean.Host = credentials + u.Host[at:]
	}
	// Decoded once: no decoding for a path escaped once without a target
	// URL; as sent too where a target's authority holds an '@' there (a
	// password with an escaped '?' or '#', which decoded would end the
	// userinfo before its '@').
	if EmbeddedUserinfo(u.Path) || embedsUserinfo(u.Path) && authorityHoldsAt(u.EscapedPath()) {
		sent := u.EscapedPath()
		// A proxy's path that holds its target URL, written plain or
		// escaped (once or more, in any spelling): redacted on the path as
		// sent, changed only where a userinfo is.
		clean.RawPath = redactEmbedded(sent)
		clean.Path, _ = url.PathUnescape(clean.RawPath)
	}
	s := clean.String()
	if u.RawQuery == "" {
		return s
	}
	return appendQuery(s, u.RawQuery)
}

// Changes reports whether URL(u) may differ from what u's String method
// writes once u.User is removed, which is what otelhttp records as url.full.
// When it reports false the two are equal, so a recorder can keep
// otelhttp's value without sanitizing it again. It reads u.Path, decoded
// once already, so decodedPath's three decodings reach as deep as
// EmbeddedUserinfos' four on the path as sent, which URL redacts.
func Changes(u *url.URL) bool {
	if u == nil {
		return false
	}
	return u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" ||
		strings.ContainsAny(u.Opaque, "@?#") || strings.IndexByte(u.Opaque, '%') >= 0 && EmbeddedUserinfo(u.Opaque) ||
		strings.IndexByte(u.Host, '@') >= 0 || embedsUserinfo(u.Path) ||
		strings.IndexByte(u.Path, '%') >= 0 && embedsUserinfo(decodedPath(u.Path))
}

// decodedPath is path unescaped until it holds no escape left, at most
// three times: a proxy's path may hold its target URL escaped again
// ("https:%252F%252Fu:pw@h"), as each layer that forwards it escapes it.
func decodedPath(path string) string {
	for range 3 {
		next := unescapeLenient(path)
		if next == path {
			break
		}
		path = next
	}
	return path
}

// unescapeLenient decodes each valid %XX escape of s and keeps the rest as
// it is: a lone '%' in one segment ("/50%", sent as "%25") must not keep
// an escaped URL in another from being read.
func unescapeLenient(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// embedsUserinfo reports whether path may hold a URL with a userinfo
// ("/fetch/https://u:pw@h/x"), which embeddedUserinfos redacts.
func embedsUserinfo(path string) bool {
	return strings.Contains(path, "://") && strings.IndexByte(path, '@') >= 0
}

// targetAuthorities calls f with the authority of each target URL that
// path holds as written, as a URL parser reads one: the text after a
// "://" up to its first '/', '?' or '#', until f returns false.
func targetAuthorities(path string, f func(authority string) bool) {
	for i := strings.Index(path, "://"); i >= 0; i = strings.Index(path, "://") {
		path = path[i+len("://"):]
		end := strings.IndexAny(path, "/?#")
		if end < 0 {
			end = len(path)
		}
		if !f(path[:end]) {
			return
		}
	}
}

// authorityHoldsAt reports whether a target URL's authority in path, as
// written, holds an '@' ("h.test/x%3Fa:b@c" has none). It answers for the
// whole path: where one target has such a userinfo, URL reads every target
// of the path as sent, toward redacting (see the package doc).
func authorityHoldsAt(path string) bool {
	found := false
	targetAuthorities(path, func(authority string) bool {
		found = strings.IndexByte(authority, '@') >= 0
		return !found
	})
	return found
}

// TargetUserinfos returns the userinfo of each target URL in path as a
// URL parser reads it (see targetAuthorities): what comes before the
// authority's last '@', split at its first ':', each part unescaped (an
// invalid escape kept as written). It takes any byte a server may accept
// there, where net/url refuses some ('[' and ']'). It reads the path as
// written and unescaped up to four times, as EmbeddedUserinfos reads it: a
// target escaped whole is read once its "://" shows. A target is
// returned once for each reading that shows it, and a deeper reading of
// one already read may split it otherwise (a name's escaped ':' decoded).
func TargetUserinfos(path string) []*url.Userinfo {
	var found []*url.Userinfo
	for range 5 {
		targetAuthorities(path, func(authority string) bool {
			if at := strings.LastIndexByte(authority, '@'); at >= 0 {
				name, password, ok := strings.Cut(authority[:at], ":")
				if ok {
					found = append(found, url.UserPassword(unescapeLenient(name), unescapeLenient(password)))
				} else {
					found = append(found, url.User(unescapeLenient(name)))
				}
			}
			return true
		})
		next := unescapeLenient(path)
		if next == path {
			break
		}
		path = next
	}
	return found
}

// EmbeddedUserinfo reports whether path holds a URL with a userinfo after
// a "://" (a proxy's path that holds its target URL), which URL redacts.
// A path escaped again is read decoded (see EmbeddedUserinfos).
func EmbeddedUserinfo(path string) bool {
	return len(EmbeddedUserinfos(path)) > 0
}

// EmbeddedUserinfos returns each userinfo that follows a "://" in path, as
// a proxy's path that holds its target URL carries it, decoded: the path
// is read as it is and unescaped up to four times (each valid escape, in
// either case, whatever invalid one another segment holds), since a
// target URL may be escaped once or more ("https%3A%2F%2Fu%3Apw%40h"). An
// error that prints the path as sent repeats these in one of their
// escaped forms (see RedactUserinfo).
func EmbeddedUserinfos(path string) []string {
	var found []string
	var seen map[string]bool // a server may write many: no scan of found for each
	for range 5 {
		if embedsUserinfo(path) {
			for _, part := range strings.Split(path, "://")[1:] {
				if at := userinfoEnd(part); at >= 0 && part[:at] != credentials && !seen[part[:at]] {
					if seen == nil {
						seen = map[string]bool{}
					}
					seen[part[:at]] = true
					found = append(found, part[:at])
				}
			}
		}
		next := unescapeLenient(path)
		if next == path {
			break
		}
		path = next
	}
	return found
}

// redactEmbedded is s with each userinfo that follows a "://" in it, as
// written or escaped up to four times over in any spelling (a proxy's
// target URL: see EmbeddedUserinfos), replaced by REDACTED:REDACTED where
// s spells it. Each decoding keeps, for every byte, where its spelling
// begins in s, so that what is replaced is the userinfo found, never text
// that merely looks like it, and the time stays linear in len(s).
func redactEmbedded(s string) string {
	if strings.IndexByte(s, '%') < 0 && !embedsUserinfo(s) {
		return s
	}
	var spans [][2]int // in s
	text := s
	var at []int32 // at[i]: where text[i]'s spelling begins in s; nil while text is s
	origin := func(i int) int {
		if at == nil {
			return i
		}
		return int(at[i])
	}
	for range 5 {
		for start, rest := 0, text; ; {
			sep := strings.Index(rest, "://")
			if sep < 0 {
				break
			}
			start, rest = start+sep+len("://"), rest[sep+len("://"):]
			part, _, _ := strings.Cut(rest, "://") // up to the next URL, as unparsed reads it
			if end := userinfoEnd(part); end >= 0 && part[:end] != credentials {
				spans = append(spans, [2]int{origin(start), origin(start + end)})
			}
		}
		next, nextAt := unescapeTracked(text, at, "%")
		if len(next) == len(text) {
			break
		}
		text, at = next, nextAt
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], b[1]-a[1]) }) // the longest first
	var b strings.Builder
	last, wrote := 0, false
	for _, sp := range spans {
		if wrote && sp[0] <= last {
			// Found at another depth, inside the userinfo replaced, or
			// touching it: one REDACTED:REDACTED for them all.
			last = max(last, sp[1])
			continue
		}
		wrote = true
		b.WriteString(s[last:sp[0]])
		b.WriteString(credentials)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// unescapeTracked is unescapeLenient of text, with where each of its bytes
// begins in the original text (parent maps text's indexes there; nil:
// text is the original), and one more entry for its end: the escapes
// that begin with one of specials ('%', and '\' for JSON string escapes,
// see jsonEscape), decoded in one pass, so that with both either spelling
// may wrap the other, in any order. Text between escapes is copied a run
// at a time.
func unescapeTracked(text string, parent []int32, specials string) (string, []int32) {
	var b strings.Builder
	b.Grow(len(text))
	at := make([]int32, 0, len(text)+1)
	run := func(i, j int) { // text[i:j] as it is
		b.WriteString(text[i:j])
		if parent != nil {
			at = append(at, parent[i:j]...)
			return
		}
		for k := i; k < j; k++ {
			at = append(at, int32(k))
		}
	}
	from := func(i int) int32 {
		if parent != nil {
			return parent[i]
		}
		return int32(i)
	}
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], specials)
		if j < 0 {
			run(i, len(text))
			break
		}
		j += i
		run(i, j)
		switch {
		case text[j] == '%' && j+2 < len(text) && isHex(text[j+1]) && isHex(text[j+2]):
			at = append(at, from(j))
			b.WriteByte(unhex(text[j+1])<<4 | unhex(text[j+2]))
			i = j + 3
		case text[j] == '\\':
			r, n := jsonEscape(text[j:])
			if n == 0 {
				run(j, j+1)
				i = j + 1
				continue
			}
			for range utf8.RuneLen(r) {
				at = append(at, from(j))
			}
			b.WriteRune(r)
			i = j + n
		default:
			run(j, j+1)
			i = j + 1
		}
	}
	at = append(at, from(len(text)))
	return b.String(), at
}

// RedactUserinfo is text with each occurrence of userinfo that an '@' ends
// replaced by REDACTED:REDACTED, whatever spelling text has them in (see
// decodings): each byte as it is or percent-encoded, in either case,
// up to five times over, a space as '+' and a '+' as a space. An error
// that prints a proxy's path as sent, or a URL escaped as a query value,
// repeats its target's userinfo in the spelling of whoever escaped it
// (JavaScript's encodeURIComponent leaves '!' as it is; some write
// lowercase hex).
func RedactUserinfo(text, userinfo string) string {
	return ReplaceSpelled(text, nil, Replacement{Of: userinfo, With: credentials, Then: '@'})
}

// Replacement is what ReplaceSpelled replaces: Of, wherever the text
// spells it, by With; where Then is not 0, only where a spelling of Then
// follows it (kept); with Escaped, only where the text escaped some of it
// (a URL escaped whole), not where it is written as it is.
type Replacement struct {
	Of, With string
	Then     byte
	Escaped  bool
}

// ReplaceSpelled is text with each occurrence of each replacement's Of,
// in any spelling (see RedactUserinfo), replaced by its With, but where it
// would replace part of an occurrence of one of keep, as written: a
// request's query or one of its values that an error repeats escaped
// whole or decoded, next to the URL already sanitized. Occurrences that overlap are replaced as
// one, by the With of the one that begins first (then the longest). The text is decoded
// once, and each replacement found with strings.Index: the time stays
// linear in len(text) for each replacement, whatever a server wrote.
func ReplaceSpelled(text string, keep []string, rs ...Replacement) string {
	var spans [][3]int // in text: start, end, the replacement's index
	text0 := textDecodings(text)
	for k, r := range rs {
		if slices.Contains(rs[:k], r) {
			continue // its spans are found already (a query's values that repeat)
		}
		for _, of := range spellingsOf(r.Of) {
			for _, l := range text0 {
				spans = l.find(spans, of, r.Then, r.Escaped, k)
			}
		}
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b [3]int) int { return cmp.Or(a[0]-b[0], b[1]-a[1]) })
	kept := keptSpans(text, keep)
	var b strings.Builder
	start, last := 0, 0 // the span replaced last
	for _, sp := range spans {
		if sp[0] < last {
			// Overlapping the one replaced: one replacement for both, up
			// to the kept one the two would cut together (which begins
			// after the one replaced, or that would have cut it).
			if sp[1] > last {
				last = min(sp[1], keptStart(kept, last, sp[1], start))
			}
			continue
		}
		for len(kept) > 0 && kept[0][1] <= sp[0] {
			kept = kept[1:] // both are sorted: what ends before this span is behind
		}
		if cuts(sp, kept) {
			continue
		}
		b.WriteString(text[last:sp[0]])
		b.WriteString(rs[sp[2]].With)
		start, last = sp[0], sp[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// cuts reports whether span sp would replace one of kept (those that end
// before it are behind), or part of it, rather than text around it as
// well: a kept URL inside a query a preparation wrote
// ("target=https://h/v1&otp=…") goes with the query replaced, lest the
// query's values be kept with it, but a value that is the kept URL alone
// (the same target, escaped) leaves it.
func cuts(sp [3]int, kept [][2]int) bool {
	for _, k := range kept {
		if k[0] >= sp[1] {
			return false
		}
		if k[0] < sp[0] || k[1] > sp[1] || k[0] == sp[0] && k[1] == sp[1] {
			return true
		}
	}
	return false
}

// keptStart is where the first of kept begins that the span from start to
// end would cut, from at on (end if none).
func keptStart(kept [][2]int, at, end, start int) int {
	for _, k := range kept {
		if k[0] >= at && cuts([3]int{start, end}, [][2]int{k}) {
			return k[0]
		}
	}
	return end
}

// keptSpans are the occurrences of each of keep in text, as written,
// sorted by their start.
func keptSpans(text string, keep []string) [][2]int {
	var spans [][2]int
	for _, k := range keep {
		for from := 0; k != ""; {
			i := strings.Index(text[from:], k)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{from + i, from + i + len(k)})
			from += i + len(k)
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	return spans
}

// decoding is a text decoded some times over, '+' read as a space (a
// query's, decoded as a query is), with where each of its bytes' spelling
// begins in the text (nil: the same index), and one more entry for its
// end.
type decoding struct {
	text string
	at   []int32 // texts over 2 GiB are not decoded (see textDecodings)
}

func (d decoding) origin(i int) int {
	if d.at == nil {
		return i
	}
	return int(d.at[i])
}

// find appends to spans each occurrence of of in d, followed by then when
// it is not 0, as a span of the text d decodes, with k; with escaped, only
// one the text spells longer than of (some of it escaped).
func (d decoding) find(spans [][3]int, of string, then byte, escaped bool, k int) [][3]int {
	if of == "" {
		return spans
	}
	find := of
	if then != 0 {
		find += string(then)
	}
	for from := 0; ; {
		i := strings.Index(d.text[from:], find)
		if i < 0 {
			return spans
		}
		i += from
		if start, end := d.origin(i), d.origin(i+len(of)); !escaped || end-start > len(of) {
			spans = append(spans, [3]int{start, end, k})
		}
		from = i + len(of)
	}
}

// decodings are text as an error may have spelled what it repeats: as it
// is, then with each valid escape decoded, in either case, once more each
// time, up to five times (a value's own escape in a URL escaped whole
// three times is four deep). Each is searched: decoding is greedy, and a
// stray '%' before a value written as it is would eat its first bytes.
func decodings(text string) []decoding { return decodingsOf(text, 5, "%") }

// textDecodings are the decodings of an error's text: where it holds a
// backslash, as it is or escaped, each level decodes its JSON string
// escapes too, and two levels more are read, so that a value inside a JSON string marshalled
// twice, percent-escaped before or after (a userinfo escaped by
// Userinfo.String, then marshalled: '&' as \u0026 beside %22; the JSON
// escaped into a URL: %5Cu0026), is read as written; the percent-only
// decodings, and the text with its JSON escapes alone decoded once and
// twice, are read as well. Each level keeps where its bytes begin in text
// as 4 bytes each.
func textDecodings(text string) []decoding {
	ds := decodings(text)
	if !slices.ContainsFunc(ds, func(d decoding) bool { return strings.IndexByte(d.text, '\\') >= 0 }) {
		return ds // no backslash, as it is or escaped (%5C, %255C, ...)
	}
	// The percent-escapes alone too: a backslash as itself (a Windows
	// path) before a value must not be read as a JSON escape of its first
	// byte; and the JSON escapes alone: a value marshalled twice and
	// ending in '%' must not take the next two hex digits of the text.
	more := [][]decoding{decodingsOf(text, 7, `%\`)}
	if strings.IndexByte(text, '%') >= 0 { // else the combined levels are these
		more = append(more, decodingsOf(text, 2, `\`))
	}
	for _, levels := range more {
		for _, d := range levels[1:] {
			if !slices.ContainsFunc(ds, func(e decoding) bool { return e.text == d.text }) {
				ds = append(ds, d) // a text read twice would be searched twice
			}
		}
	}
	return ds
}

// decodingsOf are text, then text with its escapes that begin with one of
// specials decoded up to levels times over (see unescapeTracked), each
// with '+' read as a space.
func decodingsOf(text string, levels int, specials string) []decoding {
	ds := []decoding{{text: strings.ReplaceAll(text, "+", " ")}}
	if !strings.ContainsAny(text, specials) || len(text) >= math.MaxInt32 {
		return ds
	}
	cur := decoding{text: text}
	for range levels {
		next, at := unescapeTracked(cur.text, cur.at, specials)
		if len(next) == len(cur.text) {
			break
		}
		cur = decoding{text: next, at: at}
		ds = append(ds, decoding{text: strings.ReplaceAll(next, "+", " "), at: at})
	}
	return ds
}

// jsonEscape is the character a JSON string escape at the start of s
// stands for, and its length (0: none there).
func jsonEscape(s string) (rune, int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	if i := strings.IndexByte(`"\/bfnrt`, s[1]); i >= 0 {
		return rune("\"\\/\b\f\n\r\t"[i]), 2
	}
	if s[1] != 'u' {
		return 0, 0
	}
	r := rune(hex4(s[2:]))
	if r < 0 {
		return 0, 0 // not four hex digits
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	// Half of a pair: the other must follow.
	if len(s) < 12 || s[6] != '\\' || s[7] != 'u' {
		return 0, 0
	}
	if pair := utf16.DecodeRune(r, rune(hex4(s[8:]))); pair != utf8.RuneError {
		return pair, 12
	}
	return 0, 0
}

// hex4 is the number four hex digits at the start of s spell, -1 if they
// do not.
func hex4(s string) int {
	if len(s) < 4 {
		return -1
	}
	n := 0
	for i := range 4 {
		if !isHex(s[i]) {
			return -1
		}
		n = n<<4 | int(unhex(s[i]))
	}
	return n
}

// spellingsOf are the forms of s searched for in each decoding of a text:
// s as it is, decoded once (a query value as the application reads it)
// and as far as decodings decodes it, each once, and each of those as
// encoding/json writes it in a string (a URL's fields or a query's values
// marshalled: '&' as \u0026, '"' as \"), with and without its HTML
// escapes.
func spellingsOf(s string) []string {
	ds := decodings(s)
	forms := []string{ds[0].text}
	for _, d := range []decoding{ds[min(1, len(ds)-1)], ds[len(ds)-1]} {
		if !slices.Contains(forms, d.text) {
			forms = append(forms, d.text)
		}
	}
	for _, f := range forms {
		if !jsonEscapes(f) {
			continue
		}
		for _, j := range jsonSpellings(f)[1:] {
			if !slices.Contains(forms, j) {
				forms = append(forms, j)
			}
		}
	}
	return forms
}

// jsonSpellings are s and, when encoding/json escapes any of its
// characters, s as it writes it in a string, with its HTML escapes and
// without (Encoder.SetEscapeHTML(false)).
func jsonSpellings(s string) []string {
	forms := []string{s}
	if !jsonEscapes(s) {
		return forms // encoding/json writes it as it is
	}
	for _, html := range [...]bool{true, false} {
		if j := jsonString(s, html); !slices.Contains(forms, j) {
			forms = append(forms, j)
		}
	}
	return forms
}

// jsonEscapes reports whether encoding/json escapes any character of s.
func jsonEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return true
		}
	}
	return false
}

// jsonString is s as encoding/json writes it in a string, without the
// quotes, its HTML characters escaped or not (Encoder.SetEscapeHTML).
func jsonString(s string, html bool) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	if e.Encode(s) != nil {
		return s
	}
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(b.String(), "\n"), `"`), `"`)
}

// QueryValues are the values of the raw query raw, as written.
func QueryValues(raw string) []string {
	var values []string
	for pair := range strings.SplitSeq(raw, "&") {
		if _, v, ok := strings.Cut(pair, "="); ok && v != "" {
			values = append(values, v)
		}
	}
	return values
}

// spelledAt is the index in text where s, spelled from i on (see
// RedactUserinfo), ends, -1 when text does not spell s there. Where a
// byte has more than one spelling ('%' escaped once reads as "%25", and
// twice as "%2525"), each is followed: the ends of s's prefix are a set.
func spelledAt(text string, i int, s string) int {
	var buf [4]int
	ends := append(buf[:0], i)
	for k := 0; k < len(s) && len(ends) > 0; k++ {
		var next [4]int
		n := 0
		for _, at := range ends {
			for _, l := range spellings(text[at:], s[k]) {
				if l > 0 && n < len(next) && !slices.Contains(next[:n], at+l) {
					next[n] = at + l
					n++
				}
			}
		}
		ends = append(buf[:0], next[:n]...)
	}
	if len(ends) == 0 {
		return -1
	}
	return slices.Max(ends)
}

// spellings are the lengths of the spellings of c that t begins with (0
// where there are fewer): c itself, '+' for a space and a space for a
// '+' (a query's '+' is a space once decoded as a query is), and '%'
// followed by "25" up to twice and two hex digits that decode to c.
func spellings(t string, c byte) (lens [4]int) {
	n := 0
	if t != "" && (t[0] == c || plusOrSpace(c) && plusOrSpace(t[0])) {
		lens[n] = 1
		n++
	}
	if t == "" || t[0] != '%' {
		return lens
	}
	for j := 1; j+2 <= len(t) && j <= 5 && isHex(t[j]) && isHex(t[j+1]); j += 2 {
		d := unhex(t[j])<<4 | unhex(t[j+1])
		if d == c || plusOrSpace(c) && plusOrSpace(d) {
			lens[n] = j + 2
			n++
		}
		if d != '%' {
			break
		}
	}
	return lens
}

func plusOrSpace(c byte) bool { return c == '+' || c == ' ' }

// embeddedUserinfos is s with the userinfo that follows each "://" in it
// replaced by REDACTED:REDACTED, as String replaces it in text; the text
// before the first "://" is left as it is (a path's own '@' and ':').
func embeddedUserinfos(s string) string {
	var b strings.Builder
	first := true
	for part, more := s, true; more; first = false {
		var text string
		text, part, more = strings.Cut(part, "://")
		if at := userinfoEnd(text); !first && at >= 0 {
			b.WriteString(credentials)
			text = text[at:]
		}
		b.WriteString(text)
		if more {
			b.WriteString("://")
		}
	}
	return b.String()
}

// String sanitizes a URL found as text: in an error message, a span name or
// an attribute. Text that url.Parse reads as written (parsedAsWritten) is
// sanitized as URL does.
//
// Other text is still cleaned, without parsing, so that it leaks neither
// credentials nor query values (unparsed): the userinfo at the start and
// after each "://", and after a first "//" that begins the text or a
// field's value (a URL without a scheme, see cutAuthority), becomes
// REDACTED:REDACTED (one after a "//" may hold a "://" of its own: a
// password's); then
// everything from the first '#' is dropped and the query after the first
// '?' has its values replaced.
//
// A URL embedded in text that parses as a relative reference ("see
// http://u:p@host/"), which url.Parse takes for a path, is cleaned as text
// that does not parse.
func String(raw string) string {
	if u, err := url.Parse(raw); err == nil && parsedAsWritten(raw, u) {
		return URL(u)
	}
	return redactEmbedded(unparsed(raw))
}

// parsedAsWritten reports whether u, url.Parse's reading of raw, puts any
// userinfo raw holds where URL redacts it. It does not when a word glued
// before a URL became the scheme ("url:https://u:p@h", "x/http://u:p@h"),
// when a userinfo without a scheme made its user name one ("key:pw@h"), or
// when an '@' is written in the path (but after REDACTED:REDACTED), as after a password that holds a '/'
// ("app:ab/cd@db/x", read as the host "app:ab"), or in the authority's
// text after a '?' or '#' a password holds ("u:1234?pw@h", read as the
// host "u:1234" and a query).
func parsedAsWritten(raw string, u *url.URL) bool {
	if sep := strings.Index(raw, "://"); sep >= 0 {
		if u.Scheme == "" || sep != len(u.Scheme) {
			return false
		}
		authority, _, _ := strings.Cut(raw[sep+len("://"):], "/")
		authority = authority[:beforeQueryValue(authority)]
		if at := strings.LastIndexByte(authority, '@'); u.User == nil && at >= 0 &&
			strings.IndexByte(authority[:at], ':') >= 0 {
			return false
		}
	} else if strings.IndexByte(u.Opaque, '@') >= 0 && !strings.HasPrefix(u.Opaque, credentials+"@") {
		return false // "key:pw@h" (a redacted opaque userinfo is URL's own output, its scheme a scheme)
	} else if _, after, ok := cutAuthority(raw, true); ok && u.Host == "" && strings.IndexByte(after, '@') >= 0 {
		return false // "url=//u:p#x@h": a URL without a scheme after a field's name, read as a path and a fragment
	}
	written := u.RawPath // the path as raw writes it, set when Go would escape it otherwise
	if written == "" {
		written = u.EscapedPath()
	}
	return !unredactedAt(written) // an escaped '@' ends no userinfo
}

// unredactedAt reports whether path holds an '@' written as it is that does
// not follow REDACTED:REDACTED (URL's own output, a proxy's target URL
// redacted, ends no userinfo either) or a "://" escaped at least in part
// (a proxy's target URL, whose userinfo URL redacts).
func unredactedAt(path string) bool {
	if sep := escapedSchemeSep(path); sep >= 0 {
		path = path[:sep]
	}
	for i := strings.IndexByte(path, '@'); i >= 0; {
		if !strings.HasSuffix(path[:i], credentials) {
			return true
		}
		next := strings.IndexByte(path[i+1:], '@')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// unparsed is the fallback of String for text that url.Parse does not read
// as written.
func unparsed(raw string) string {
	// A userinfo may begin the text ("u:p@h/cb?next=https://…") and follow
	// each "://" in it (a URL glued after other text, or inside a query),
	// or its first "//" (a URL without a scheme, see cutAuthority): each
	// one, in its own part, is replaced.
	var b strings.Builder
	b.Grow(len(raw) + 2*len(credentials))
	for part, more, first := raw, true, true; more; first = false {
		if !first {
			part = redactUserinfoAcrossSchemeSep(part)
		}
		var text string
		text, part, more = cutAuthority(part, first)
		if at := userinfoEnd(text); at >= 0 {
			b.WriteString(credentials)
			text = text[at:]
			// What the userinfo found holds may have hidden another: an
			// '@' in a query's key ("x?@k=/u:pw@db") ends no userinfo
			// there, so the text after it is read again, up to the last
			// userinfo it begins with.
			for at = userinfoEnd(text[1:]); at >= 0; at = userinfoEnd(text[1:]) {
				text = text[1+at:]
			}
		}
		b.WriteString(text)
		if more {
			b.WriteString("//")
		}
	}
	clean, _, _ := strings.Cut(b.String(), "#")
	head, query, hasQuery := strings.Cut(clean, "?")
	if !hasQuery || query == "" {
		return head
	}
	return appendQuery(head, query)
}

// redactUserinfoAcrossSchemeSep is s, the text after an authority's "//",
// with its userinfo redacted when that holds a "://" of its own (a
// generated password, "u:pa55://w0rd@h"): cut there, as if a URL began
// in it, the userinfo would keep its user name and its password's first
// part. The text before the first "://" holds a ':', no '/' and none of
// notBeforeAPasswordsSchemeSep, so that a path or a query that holds a
// URL ("h/x://u:p@y") and a list of URLs ("http://a:3128,http://u:p@b")
// are not taken for one. Each part is looked for within userinfoWindow
// bytes, and the second only where an '@' is there, so that a text of
// many "://" is read in linear time.
func redactUserinfoAcrossSchemeSep(s string) string {
	sep := -1
	for i := 0; i < len(s) && i < userinfoWindow; i++ {
		if c := s[i]; c == '/' {
			if i > 0 && s[i-1] == ':' && i+1 < len(s) && s[i+1] == '/' {
				sep = i - 1
			}
			break
		} else if strings.IndexByte(notBeforeAPasswordsSchemeSep, c) >= 0 {
			break
		}
	}
	if sep <= 0 || strings.IndexByte(s[:sep], ':') < 0 {
		return s
	}
	// The password's part after its "://" is read as a userinfo of its
	// own: its '/'s, '?'s and '#'s are the password's (see userinfoEnd).
	after := sep + len("://")
	window := s[after:min(len(s), after+userinfoWindow)]
	if strings.IndexByte(window, '@') < 0 {
		return s
	}
	// Read after a ':' (the password's), its '/'s are the password's too.
	if at := userinfoEnd(":" + window); at > 0 {
		return credentials + s[after+at-1:]
	}
	return s
}

// userinfoWindow bounds each part of the userinfo
// redactUserinfoAcrossSchemeSep reads: before its "://", and after.
const userinfoWindow = 256

// notBeforeAPasswordsSchemeSep are the bytes that end the text a userinfo
// holding a "://" may begin with: '?', '#' and '@' (a query, a fragment,
// a host), a list's separators (',', ';', '|', '&': "http://a:3128,http://…"),
// a backslash (an escaped line break between a list's URLs), a quote and
// white space (prose). A password holding one of them, or a '/', before
// its "://" keeps its first part.
const notBeforeAPasswordsSchemeSep = "?#@,;|&\\\"` \t\n\r"

// cutAuthority cuts s around the first "//" that begins an authority:
// the text before it and the text after it. A "//" begins one after a
// scheme's ':' ("https://u:p@h"); the first of the text also where a URL
// without a scheme is written (afterSeparator: "//tok@registry/@scope/pkg",
// "url=//tok@h", a quoted line's "...\n//tok@h") with no ':' before it, and
// then the slashes that run on after it are before it too ("///u@h" is "/"
// and "u@h"). Any other "//" is a path's empty segment
// ("/v1//alice@example.com") or a password's ("u:ab//cd@h", "u:ab=//cd@h"),
// but one after an escaped line break, which no URL holds as written
// (URL escapes it), wherever it comes: a tool's list of URLs, one a line,
// quoted ("//a\n//tok@b").
func cutAuthority(s string, first bool) (before, after string, found bool) {
	for from := 0; ; {
		i := strings.Index(s[from:], "//")
		if i < 0 {
			return s, "", false
		}
		i += from
		if i > 0 && s[i-1] == ':' {
			return s[:i], s[i+len("//"):], true
		}
		if first && (i == 0 || afterSeparator(s[:i]) && strings.IndexByte(s[:i], ':') < 0) || i > 0 && afterEscapedLineBreak(s[:i]) {
			end := i + len("//")
			for end < len(s) && s[end] == '/' {
				end++
			}
			if end == len(s) || s[end] != '@' { // "///@scope": an '@' the path begins with ends no userinfo
				return s[:end-len("//")], s[end:], true
			}
		}
		first = false
		from = i + len("//")
	}
}

// afterEscapedLineBreak reports whether text ends with a line break or a
// tab as a quoted text escapes it (%q's "\n", JSON's "\n" or "\u000a").
func afterEscapedLineBreak(text string) bool {
	n := len(text)
	switch {
	case n >= 2 && text[n-2] == '\\':
		return strings.IndexByte("ntr", text[n-1]) >= 0
	case n >= 6 && text[n-6:n-2] == `\u00` && isHex(text[n-2]) && isHex(text[n-1]):
		return strings.IndexByte("\n\r\t", unhex(text[n-2])<<4|unhex(text[n-1])) >= 0
	}
	return false
}

// afterSeparator reports whether text ends where a value begins, as a
// path never does before its empty segment: an opening of a field ('=',
// '[', '(', '{', '<'), a list's separator (';', '|', ','), or a line break
// or tab; each also as a quoted text escapes it ("\n", as %q and JSON
// write a tool's output line by line; "\u003c", as encoding/json writes
// '<').
func afterSeparator(text string) bool {
	const separators = "=[({<;|,"
	n := len(text)
	switch {
	case strings.IndexByte(separators, text[n-1]) >= 0 || afterEscapedLineBreak(text):
		return true
	case n >= 6 && text[n-6:n-2] == `\u00` && isHex(text[n-2]) && isHex(text[n-1]):
		return strings.IndexByte(separators, unhex(text[n-2])<<4|unhex(text[n-1])) >= 0
	}
	return false
}

// userinfoEnd is the index of the '@' that ends the userinfo s begins
// with, -1 when s holds none: the last '@' before the first '/' (so that a
// password holding '#' or '?' is caught whole) or, when a ':' comes before
// it, the last one before the query or fragment that does not begin a
// path segment after a host (a password may hold a '/' too; after
// "h:8080", "/@scope/pkg" and "/users/@me" are paths, after "user:pw" a
// "/@" ends a password). An '@' after the query's or fragment's first
// "key=" is an e-mail address there ("?e=a@b.com"), not a userinfo's end,
// and so is one from a target URL escaped in the path on
// ("h/a@b/https%3A%2F%2Fu%3Apw%40i?e=a@b", see escapedSchemeSep): its
// userinfo is redactEmbedded's to find.
// It errs toward redacting: "h:8080/users/a@b" becomes
// "REDACTED:REDACTED@b".
func userinfoEnd(s string) int {
	if strings.HasPrefix(s, credentials+"@") {
		return len(credentials) // redacted already: what follows is the host (String is idempotent)
	}
	s = s[:beforeQueryValue(s)]
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		slash = len(s)
	}
	at := strings.LastIndexByte(s[:slash], '@')
	tail := s
	if i := strings.IndexAny(s[slash:], "?#"); i >= 0 {
		tail = s[:slash+i]
	}
	host := hostPort(s[:slash])
	if target := escapedSchemeSep(tail[slash:]); target >= 0 {
		tail = tail[:slash+target] // a URL escaped in the path: its '@'s are its own (redactEmbedded reads them)
	}
	for last := strings.LastIndexByte(tail, '@'); last > at; last = strings.LastIndexByte(tail[:last], '@') {
		if tail[last-1] != '/' || !host {
			if strings.IndexByte(tail[:last], ':') >= 0 {
				at = last
			}
			break
		}
	}
	return at
}

// escapedSchemeSep is the index in path of the first "://" escaped at
// least in part ("%3A%2F%2F", ":%2F%2F"), -1 when there is none.
func escapedSchemeSep(path string) int {
	for k := 0; k < len(path); k++ {
		if c := path[k]; c == '%' || c == ':' && k+1 < len(path) && path[k+1] == '%' {
			if end := spelledAt(path, k, "://"); end > 0 && strings.IndexByte(path[k:end], '%') >= 0 {
				return k
			}
		}
	}
	return -1
}

// SplitUserinfo splits the userinfo off authority, the text of a URL after
// "scheme://" or "//" ("u:p@h/x?q"): the userinfo without its '@', the rest,
// and whether there was one, by the rule String redacts by (a password may
// hold a '/', '?' or '#'; see userinfoEnd).
func SplitUserinfo(authority string) (userinfo, rest string, ok bool) {
	at := userinfoEnd(authority)
	if at < 0 {
		return "", authority, false
	}
	return authority[:at], authority[at+1:], true
}

// beforeQueryValue is the length of s before the first '=' that follows its
// first '?' or '#', len(s) when there is none: where a query's or a
// fragment's first value begins.
func beforeQueryValue(s string) int {
	q := strings.IndexAny(s, "?#")
	if q < 0 {
		return len(s)
	}
	if eq := strings.IndexByte(s[q:], '='); eq >= 0 {
		return q + eq
	}
	return len(s)
}

// hostPort reports whether authority reads as a host with no port or a
// numeric one ("h.test", "h.test:8080", "[::1]:80"), not a "user:pw".
func hostPort(authority string) bool {
	colon := strings.LastIndexByte(authority, ':')
	if colon < 0 || strings.HasSuffix(authority, "]") {
		return true
	}
	return strings.Trim(authority[colon+1:], "0123456789") == ""
}

// Text sanitizes every URL-like word of free text such as a span name
// ("POST https://u:p@host/x?token=t"): each run of characters between
// spaces, quotes, brackets and commas that contains "://", '@', a '?'
// followed by more, or a '#' followed by a "key=" (a token in a fragment)
// is replaced by String of it. A URL may hold brackets, parentheses,
// single quotes and commas itself (an IPv6 host; a userinfo's or a query's
// sub-delimiters, RFC 3986), so once a word has shown "://", '@', '?' or
// a fragment ('#' after a host or a path, before a '/' or a "key=": a
// fragment holds them too, "/cb#state=a,b&access_token=…"), or an '@'
// lies ahead of it before the next space, only whitespace
// or a double quote ends it (a query may hold angle brackets and
// backquotes too, which url.Parse accepts); a URL quoted as Go quotes one
// (%q, as net/url's errors do) ends at its closing quote, whatever it
// holds. A double quote in a URL's query or fragment, or in its
// authority with an '@' ahead (a userinfo's), is the URL's own when it is
// escaped deeper than the quoted string the URL is in (a JSON log line of
// `Get "http://h/x?a=\"v\"": EOF`), or, in no quoted string, when more of
// the URL follows it; a quote of the string's own level ends the URL
// (`{"msg":"GET http://h/x?a=1","n":1}`), and so does one in a path. A URL whose slashes JSON escaped ("https:\/\/u:p@h\/x") is
// cleaned as the URL it stands for, and so is the userinfo of a URL a word
// holds escaped ("https%3A%2F%2Fu%3Apw%40h", see redactEmbedded). Closing
// punctuation after a URL, and a ':' or ';' that ends it, stay text. Other text is returned as it is.
//
// Its time is linear in the length of s: a server writes some of the text
// it is given (a malformed status line that net/http quotes in its error).
func Text(s string) string { return TextKeeping(s) }

// TextKeeping is Text, but a URL-like word that is one of keep (URLs
// already sanitized, as URL writes them: a request's own) in prose's
// punctuation (see kept) stays as written. Read as text, such a URL may look like one with a userinfo (an
// '@' in its path after a port, "h:8443/users/a@b.test"), which Text errs
// toward redacting.
func TextKeeping(s string, keep ...string) string {
	if !strings.ContainsAny(s, "?@#%") && !strings.Contains(s, "://") && !strings.Contains(s, jsonSchemeSep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	quoted := false // the word follows a double quote that no backslash escapes
	var ahead lookahead
	var open quoteLevels // the quoted strings open before the word
	opener := -1         // the level of the quote just before the word (-1: none)
	for len(s) > 0 {
		i, next := wordEnd(s, &ahead, &open, opener)
		if quoted {
			if q := closingQuote(s); q > i && quotedURL(s[:q]) {
				i, next = q, q+1
			}
		}
		if word := s[:i]; urlLike(word) {
			// Prose's punctuation after a URL stays text: at most those
			// characters of a value are kept (an error's ': ' or '; '
			// after a URL that ends in a query value, "?page=2: EOF").
			u := trimClosing(word, i < len(s) && s[i] == '"')
			if kept(u, keep) {
				b.WriteString(u) // one of keep, in prose's punctuation
			} else {
				// Prose's opening punctuation before it too ("(//tok@h"):
				// read with it, the URL would not be one.
				open := openingBefore(u)
				b.WriteString(u[:open])
				b.WriteString(textURL(u[open:]))
			}
			b.WriteString(word[len(u):])
		} else {
			b.WriteString(redactEmbedded(word)) // a URL escaped whole ("https%3A%2F%2Fu%3Apw%40h")
		}
		if i == len(s) {
			break
		}
		b.WriteString(s[i:next]) // a byte, or an escaped space ("\n")
		opener, quoted = -1, false
		if next == i+1 {
			opener = open.separator(s, i)
			// A quote a backslash escapes opens nothing, so that each
			// quoted string is scanned for its closing quote once.
			quoted = s[i] == '"' && !escaped(s, i)
		}
		s = s[next:]
		ahead.until -= next
		ahead.atUntil -= next
	}
	return redactInvalidPorts(b.String())
}

// invalidPort begins net/url's complaint about the port it could not read
// (`parse "…": invalid port ":pa55:" after host`): what it quotes is the
// authority's text from its last ':' up to its first '/', which for a
// userinfo whose password holds a '/' ("u:pa55/w0rd@h", "u:pa55://w0rd@h")
// is the password's first part.
const invalidPort = "invalid port "

// redactInvalidPorts replaces the value of each invalidPort complaint in
// s, quoted as written or escaped at any depth (`\"` in a JSON log
// line), that is not a port (a ':' and digits) with ":REDACTED".
func redactInvalidPorts(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, invalidPort)
		if i < 0 {
			break
		}
		open := i + len(invalidPort)
		q := open
		for q < len(s) && s[q] == '\\' {
			q++
		}
		if q == len(s) || s[q] != '"' {
			b.WriteString(s[:open])
			s = s[open:]
			continue
		}
		// The value is looked for within userinfoWindow bytes, so that a
		// text of many complaints left open is read in linear time.
		quote := s[open : q+1]
		end := strings.Index(s[q+1:min(len(s), q+1+userinfoWindow+len(quote)+len(" after host"))], quote+" after host")
		if end < 0 {
			b.WriteString(s[:open])
			s = s[open:]
			continue
		}
		value := s[q+1 : q+1+end]
		b.WriteString(s[:q+1])
		if port := strings.TrimPrefix(value, ":"); port != value && port != "" && strings.Trim(port, "0123456789") == "" {
			b.WriteString(value)
		} else {
			b.WriteString(":" + Placeholder)
		}
		s = s[q+1+end:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
}

// openingBefore is how many bytes of word, a URL-like word, are prose's
// opening punctuation before the URL: '(', '<', '{', a quote or a
// backquote, and a '[' before one of them or a '/' (a '[' before anything
// else may open an IPv6 host).
func openingBefore(word string) int {
	i := 0
	for i < len(word) && (strings.IndexByte("(<{'`", word[i]) >= 0 || word[i] == '[' && i+1 < len(word) && strings.IndexByte("([{<'`/", word[i+1]) >= 0) {
		i++
	}
	return i
}

// trimClosing is word without prose's closing punctuation after the URL
// (at most those characters of a value are kept), but for a ']' that
// closes an IPv6 host the word opened ("//u@[::1]"). Before a quote
// (quoteAfter), the backslashes that escape that quote are its own, not
// the URL's: 2^L-1 of them for a quote of level L (JSON's `\"` at depth
// one, `\\\"` at two); those before them are the text's.
func trimClosing(word string, quoteAfter bool) string {
	u := word
	if quoteAfter {
		u = u[:len(u)-quoteEscape(backslashesBefore(u, len(u)))]
	}
	for {
		t := strings.TrimRight(u, "),']}>`:;")
		switch {
		case strings.HasSuffix(t, `\u0022`), strings.HasSuffix(t, `\u0027`):
			t = t[:len(t)-len(`\u0022`)] // a quote as JSON's HTML-safe encoders escape it
		case strings.HasSuffix(t, `"`) && !escaped(t, len(t)-1):
			t = t[:len(t)-1] // a quote no backslash escapes (one escaped is a quoted value's)
		}
		if t == u {
			break
		}
		u = t
	}
	if open := strings.LastIndexByte(u, '['); open >= 0 && open > strings.LastIndexByte(u, ']') && len(u) < len(word) && word[len(u)] == ']' && strings.Contains(u[open:], ":") {
		u = word[:len(u)+1]
	}
	return u
}

// kept reports whether word is one of keep, in prose's punctuation alone
// ("(", "<", a quote, a "url=" before it; ':', a period after it: "GET
// https://h/profile: EOF"). Nothing before a "scheme://" can make it a
// userinfo, and punctuation after it holds no secret.
func kept(word string, keep []string) bool {
	return slices.ContainsFunc(keep, func(k string) bool {
		i := strings.Index(word, k)
		return k != "" && i >= 0 && openingText(word[:i]) && strings.Trim(word[i+len(k):], ":;,.!?)]}>'\"`") == ""
	})
}

// openingText reports whether s, before a URL in a word, is what prose
// and fmt write before a value: opening punctuation ("(", "<", a quote,
// fmt's "&{" and "map["), a field's or a key's name and ':' or '=' ("url=",
// "&{URL:"). None of it can make the URL's text a userinfo or hold a
// secret Text would have redacted: an '@', a '/', a '%', a '?', an '&'
// between pairs or a value after an '=' refuses it.
func openingText(s string) bool {
	const opening = "([{<'\"`"
	s = strings.TrimSuffix(strings.TrimRight(strings.TrimPrefix(s, "&{"), opening), "=")
	return strings.Trim(s, opening+":_.-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// jsonSchemeSep is "://" with its slashes escaped, as JSON encoders may
// write them.
const jsonSchemeSep = `:\/\/`

// textURL is String of a URL-like word of free text, its slashes escaped
// again where JSON escaped them.
func textURL(word string) string {
	if strings.Contains(word, jsonAmpersand) && !strings.Contains(word, "&") {
		// encoding/json's HTML-safe escape of a query's '&': its pairs
		// are the URL's, each key kept.
		return strings.ReplaceAll(textURL(strings.ReplaceAll(word, jsonAmpersand, "&")), "&", jsonAmpersand)
	}
	slash := escapedSlash(word)
	if slash == "" {
		return String(word)
	}
	return strings.ReplaceAll(String(strings.ReplaceAll(word, slash, "/")), "/", slash)
}

// escapedSlash is how word writes a '/', when it writes the "//" of a
// scheme's "://" (or of a URL without one, "url=\/\/tok@h") escaped as
// JSON does (`\/`), at any depth (`\\/` once more: a PHP body's JSON in a
// Go JSON log line): the backslashes and the slash; "" when it does not.
func escapedSlash(word string) string {
	for i := strings.IndexByte(word, '\\'); i >= 0; {
		k := 0
		for i+k < len(word) && word[i+k] == '\\' {
			k++
		}
		if i+k < len(word) && word[i+k] == '/' && strings.HasPrefix(word[i+k+1:], word[i:i+k+1]) {
			return word[i : i+k+1]
		}
		next := strings.IndexByte(word[i+k:], '\\')
		if next < 0 {
			break
		}
		i += k + next
	}
	return ""
}

// jsonAmpersand is '&' as encoding/json writes it by default.
const jsonAmpersand = `\u0026`

// lookahead is userinfoAhead's last answer, which holds for every
// separator before the index until (of the text left to scan), across
// words: a scan that found no '@' ahead is not repeated at each separator
// it passed, so that Text stays linear.
type lookahead struct {
	until    int
	userinfo bool
	// atUntil and at: whether an '@' lies ahead of a quote in an
	// authority before the next space (atAhead), likewise.
	atUntil int
	at      bool
}

// atAhead reports whether an '@' lies ahead of i in s before any space.
func (a *lookahead) atAhead(s string, i int) bool {
	if i < a.atUntil {
		return a.at
	}
	j := i + 1
	for j < len(s) && s[j] != '@' && !isSpace(s[j]) {
		j++
	}
	a.atUntil, a.at = j, j < len(s) && s[j] == '@'
	return a.at
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// quoteLevels are the quoted strings open at a point of a text, one bit
// per level of escaping: 0 for a quote no backslash escapes (a JSON
// document's string, prose's quote), 1 for an escaped one (Go's %q of a
// URL inside that string), 2 for one escaped twice, and so on. A URL's
// own quote (a query's value) is escaped once more than the string the
// URL is in: so a quote of the URL's string's level, or an outer one's,
// ends the URL, and a deeper one is the URL's own.
type quoteLevels uint64

// separator notes s[i], the separator after a word (a URL word's own
// quotes are not counted), and returns its level when it is a double
// quote (the level of a string that may begin there), else -1. A quote
// opens or closes its level's string, and closes every deeper one (a
// string inside another ends with it: the inch mark in `ua="5\" x"`). A
// raw line break closes every string: neither JSON nor Go quotes hold
// one, so that a stray quote on one line (an inch mark, errors.Join's
// first error) does not hold for the lines after it.
func (q *quoteLevels) separator(s string, i int) int {
	switch s[i] {
	case '"':
		level := quoteLevel(backslashesBefore(s, i))
		*q = (*q ^ 1<<level) & (1<<(level+1) - 1)
		return level
	case '\n':
		q.lineBreak(0)
	}
	return -1
}

// lineBreak notes a line break of the given level (a raw one is 0; "\n"
// escaped once in a JSON string, 1): it closes the strings of its level
// and deeper.
func (q *quoteLevels) lineBreak(level int) { *q &= 1<<level - 1 }

// innermost is the level of the innermost open string: the deepest one
// open, -1 when none is.
func (q quoteLevels) innermost() int { return bits.Len64(uint64(q)) - 1 }

// escapeLevel is the level of the text an escape sequence such as "\n"
// after k backslashes stands in (0: none, the letter itself): read as
// JSON reads a string, an odd number escape it one level in, and an even
// number are that many halved literal backslashes before it there.
func escapeLevel(k int) int {
	for level := 1; k > 0; level++ {
		if k%2 == 1 {
			return level
		}
		k /= 2
	}
	return 0
}

// quoteEscape is how many of k backslashes before a quote escape it: as
// many as its level needs (quoteLevel), 2^L-1; the others are literal
// backslashes of the text.
func quoteEscape(k int) int { return 1<<quoteLevel(k) - 1 }

// quoteLevel is the level of escaping of a double quote after k
// backslashes: read as JSON (or Go) reads a string, an even number are
// that many halved literal backslashes and the quote ends the string
// (level 0); an odd number escape the quote, whose level is one more than
// that of the k/2 backslashes' quote one reading in.
func quoteLevel(k int) int {
	level := 0
	for k%2 == 1 && level < 63 {
		level++
		k /= 2
	}
	return level
}

// wordEnd is the index of the separator that ends the first word of s,
// len(s) when none does (see Text), and the index after that separator: a
// byte, or an escaped space (escapedSpace). ahead carries whether a userinfo lies
// ahead of a separator from one call to the next; open, the quoted
// strings open before the word, which its escaped line breaks close;
// opener, the level of the quote just before the word (-1: none), the
// string a URL that begins there is in, whatever came before.
func wordEnd(s string, ahead *lookahead, open *quoteLevels, opener int) (int, int) {
	w := wordScan{ahead: ahead, open: open, opener: opener, within: open.innermost()}
	if opener >= 0 {
		w.within = opener
	}
	for i := 0; i < len(s); i++ {
		if end, ok := w.escapedSpace(s, i); ok {
			return end, i + 1
		}
		if next, ok := w.urlPart(s, i); ok {
			i = next
		} else if w.ends(s, i) {
			return i, i + 1
		}
	}
	return len(s), len(s)
}

// escapedSpace reports whether s[i] ends an escaped line break, tab or
// carriage return ("\n" in a JSON or Go string) inside the quoted string
// the word is in, which is whitespace there: true, with the index of the
// escape's first backslash, which ends the word (the escape is its
// separator). A line break closes the strings of its level
// (escapedLineBreak). Outside a string, "\n" is a backslash and a letter
// (a Windows path's "C:\new"); in a string that begins with the URL (Go's
// %q of one), it is the URL's (net/url's error quotes a URL holding one).
func (w *wordScan) escapedSpace(s string, i int) (int, bool) {
	c := s[i]
	if c != 'n' && c != 't' && c != 'r' && c != 'f' || i == 0 || s[i-1] != '\\' {
		return 0, false
	}
	k := backslashesBefore(s, i)
	level := escapeLevel(k)
	if level == 0 || level-1 > w.within || w.url && w.opener == level-1 {
		return 0, false
	}
	if c == 'n' {
		w.escapedLineBreak(level)
	}
	// The escape's own backslashes: 2^(level-1) of them, those before it
	// are literal ones of the text.
	return i - 1<<(level-1), true
}

// wordScan is what wordEnd knows of the word so far.
type wordScan struct {
	ahead  *lookahead
	open   *quoteLevels
	opener int // the level of the quote just before the word, -1 when none (see wordEnd)
	within int // the level of the innermost quoted string the word is in, -1 when none

	url       bool // the word so far showed "://", '@', '?', or a fragment
	path      bool // the word so far showed a '/'
	from      int  // where the word's text since its last '#' begins
	authority bool // the word is in a URL's authority: after "://", before a '/'
	query     bool // the word showed a query or a fragment
}

// urlPart reads s[i] when it tells a part of a URL (a scheme's "://", a
// sign only a URL holds, a fragment, a path) or is an escaped line break:
// true, with the index of the part's last byte.
func (w *wordScan) urlPart(s string, i int) (int, bool) {
	switch c := s[i]; {
	case schemeSepAt(s[i:]):
		w.url, w.authority = true, true
		return i + schemeSepLen(s[i:]) - 1, true // its slashes are no path's
	case urlSignAt(s, i):
		w.url, w.authority, w.query = true, w.authority && c == '@', w.query || c == '?'
	case c == '#':
		w.fragment(s, i)
	case c == '/':
		w.path, w.authority = true, false
	case c == 'n' && i > 0 && s[i-1] == '\\':
		w.escapedLineBreak(escapeLevel(backslashesBefore(s, i)))
	case c == '"':
		return w.doubledQuote(s, i)
	default:
		return i, false
	}
	return i, true
}

// fragment notes the '#' at i: a fragment's start when the word shows a
// URL (see fragmentAfter).
func (w *wordScan) fragment(s string, i int) {
	w.url = w.url || w.path || fragmentAfter(s[w.from:i], s[i+1:])
	w.from, w.authority, w.query = i+1, false, w.query || w.url
}

// doubledQuote reads the quote at i, in a URL's query, and the one right
// after it of the same level, not outside the URL's string, as one quote
// doubled as CSV (and SQL) write it in a quoted field: true, with the
// second's index.
func (w *wordScan) doubledQuote(s string, i int) (int, bool) {
	if !w.url || !w.query {
		return i, false
	}
	if j := pairedQuote(s, i); j > 0 && quoteLevel(backslashesBefore(s, i)) >= w.within {
		return j, true
	}
	return i, false
}

// pairedQuote is the index of the quote right after the one at i, of the
// same level (the same backslashes before it), or -1.
func pairedQuote(s string, i int) int {
	k := backslashesBefore(s, i)
	j := i + 1 + k
	if j >= len(s) || s[j] != '"' || backslashesBefore(s, j) != k {
		return -1
	}
	return j
}

// escapedLineBreak notes "\n" in a JSON string (or Go's) of the given
// level: it closes the strings of its level and deeper, the URL's too.
func (w *wordScan) escapedLineBreak(level int) {
	w.open.lineBreak(level)
	if w.opener >= level {
		w.opener = -1
	}
	if w.within >= level {
		w.within = max(w.open.innermost(), w.opener)
	}
}

// ends reports whether s[i] ends the word: a quote that is not the URL's
// own, whitespace, or, before the word showed a URL, a separator with no
// userinfo ahead of it.
func (w *wordScan) ends(s string, i int) bool {
	switch c := s[i]; {
	case c == '"' && w.url && quoteInURL(s, i, w.within, w.opener >= 0 && w.opener == w.within, w.query, w.authority, w.ahead):
		// The URL's own (url.Parse accepts one in a query, and net/http
		// sends it as written; a userinfo holding one is printed in
		// url.Parse's error).
		return false
	case endsEveryWord(c):
		return true
	case !w.url && isWordSeparator(rune(c)):
		if i >= w.ahead.until {
			n, userinfo := userinfoAhead(s[i+1:])
			w.ahead.until, w.ahead.userinfo = i+1+n, userinfo
		}
		return !w.ahead.userinfo
	}
	return false
}

// quoteInURL reports whether the double quote at i, in a URL word within
// a quoted string of level within (-1: none; opened: the string began
// just before the URL, and a quote of its level closes it), is the URL's
// own: in a
// query or a fragment, or in the authority with an '@' ahead of it before
// the next space (a userinfo's), one escaped deeper than the string the
// URL is in, or one that more of the URL follows (not a space: prose's
// closing quote; in a string, not the punctuation that goes on after
// one). A quote of an outer string's level ends the URL, and so does one
// of its own string's level before that punctuation
// (`{"msg":"GET http://h/x?a=1","n":1}`, a JSON log line's
// `\"http://h/x?a=1\"\n`), and one in a path (an '=' there opens no
// value).
func quoteInURL(s string, i, within int, opened, query, authority bool, ahead *lookahead) bool {
	if !query && !(authority && ahead.atAhead(s, i)) {
		return false
	}
	if within >= 0 {
		if level := quoteLevel(backslashesBefore(s, i)); level != within {
			return level > within // escaped deeper: its own; an outer string's: the end
		}
		if opened {
			return false // the string the URL began in closes here, whatever follows
		}
	}
	// No string, or one of its level: the URL's own unless the text
	// around the URL goes on after it (its end, a space, JSON's or
	// prose's punctuation, an escape's backslash), so that a stray quote
	// earlier in the text does not end a URL at its own quote.
	return i+1 < len(s) && !isSpace(s[i+1]) && (within < 0 || !strings.ContainsRune(",:)]}>.!?\\\"", rune(s[i+1])))
}

// backslashesBefore is the number of backslashes just before i in s.
func backslashesBefore(s string, i int) int {
	k := 0
	for k < i && s[i-k-1] == '\\' {
		k++
	}
	return k
}

// escaped reports whether a backslash escapes the character at i in s: an
// odd number of them stands before it.
func escaped(s string, i int) bool { return backslashesBefore(s, i)%2 == 1 }

// schemeSepLen is the length of the "://" s begins with (schemeSepAt), its
// slashes escaped or not.
func schemeSepLen(s string) int {
	if strings.HasPrefix(s, "://") {
		return len("://")
	}
	return len(jsonSchemeSep)
}

// urlSignAt reports whether s shows at i what only a URL holds: a '?', an
// '@', or a "://", also escaped (a URL escaped whole); a URL holds
// separators a userinfo may hold.
func urlSignAt(s string, i int) bool {
	c := s[i]
	return c == '?' || c == '@' || schemeSepAt(s[i:]) || c == '%' && spelledAt(s, i, "://") > 0
}

// schemeSepAt reports whether s begins with "://", its slashes escaped or
// not.
func schemeSepAt(s string) bool {
	return strings.HasPrefix(s, "://") || strings.HasPrefix(s, jsonSchemeSep)
}

// fragmentAfter reports whether a '#' between before (the word's text
// since its last '#') and after begins a fragment that keeps the word
// whole: after a host ("app.test:8443#state,token=…"; a path is told by
// wordEnd), before a route ("#/cb,token=…", "#!/cb"), or before a pair
// ("#token=…"). A '#' in prose does not ("issue #12, see",
// "shard#3,replica=2", "v1.2#3,build=42").
func fragmentAfter(before, after string) bool {
	return endsInHost(before) || strings.HasPrefix(after, "/") || strings.HasPrefix(after, "!/") || pairFollows(after)
}

// endsInHost reports whether s ends as a host does, a port maybe after
// it: a name whose last label is letters only ("app.test",
// "api.example.com:8443", "app.test."), "localhost", an IPv4 address, a
// bracketed IPv6 one, or a port alone (after a bracket, which ends a
// word); not a version, a number or a counter ("v1.2", "3.1",
// "replica:2").
func endsInHost(s string) bool {
	if colon := strings.LastIndexByte(s, ':'); colon >= 0 && strings.Trim(s[colon+1:], "0123456789") == "" {
		if colon == 0 {
			return true // a port after a bracketed IPv6 address, which ended the word before: "[::1]:8080"
		}
		s = s[:colon]
	}
	if strings.HasSuffix(s, "]") || strings.HasSuffix(s, "localhost") || isIPv4Suffix(s) {
		return true
	}
	s = strings.TrimSuffix(s, ".")
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 || dot == len(s)-1 {
		return false
	}
	for _, c := range []byte(s[dot+1:]) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// isIPv4Suffix reports whether s ends in four numeric labels joined by
// dots ("10.0.0.1").
func isIPv4Suffix(s string) bool {
	for range 3 {
		dot := strings.LastIndexByte(s, '.')
		if dot < 0 || !allDigits(s[dot+1:]) {
			return false
		}
		s = s[:dot]
	}
	start := len(s)
	for start > 0 && s[start-1] >= '0' && s[start-1] <= '9' {
		start--
	}
	return start < len(s)
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// pairFollows reports whether s, the text after a '#', begins with a
// "key=" (its key maybe empty) before any separator or other '#'. The scan
// stops at the next '#', so that a word's fragments are each scanned once.
func pairFollows(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			return true
		case c == '#' || isWordSeparator(rune(c)):
			return false
		}
	}
	return false
}

// userinfoAhead reports whether s, the rest of a word after a separator a
// userinfo may hold, reaches an '@' before any character that ends every
// word (a password may hold a '/' too), and the index of the character
// that decided it (len(s) when none did).
func userinfoAhead(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '@':
			return i, true
		case endsEveryWord(c):
			return i, false
		}
	}
	return len(s), false
}

// quotedURL reports whether s, a quoted string's content, is a URL: it
// begins with one ("scheme://…", "/…", or a word with a query's "?key="
// before its first space), and is not prose that holds a '?' or an '@'.
// A path with spaces is one when its first word shows a URL's sign or it
// holds a query or a fragment (a decoded path: "/my docs/x?token=…");
// with an '@' alone after a space it is prose ("/healthz: down, page
// oncall@example.com": a userinfo never begins with a '/' or holds a
// space).
func quotedURL(s string) bool {
	first, _, spaced := strings.Cut(s, " ")
	path := strings.HasPrefix(first, "/") && (!spaced || urlLike(first) || strings.ContainsAny(s, "?#"))
	return urlLike(s) && (beginsWithScheme(first) || path || relativeWithQuery(first))
}

// relativeWithQuery reports whether word is a reference with a query and
// nothing before it but a path's text ("api?token=…"): no scheme, no
// field's '=' or ':', no opening punctuation, no quote or escape
// (`url=http://…?a=1`, `[http://…`, `{\"e\":…` are text holding a URL).
func relativeWithQuery(word string) bool {
	q := strings.IndexByte(word, '?')
	return q >= 0 && queryKeyAfter(word, '?') && !strings.ContainsAny(word[:q], "=:([{<\"'\\")
}

// beginsWithScheme reports whether word begins with a scheme and its
// "://" (RFC 3986: a letter, then letters, digits, '+', '-' or '.'), not
// merely holds one: a quoted string that begins with other text
// (`{\"e\":\"http://…`, JSON inside a JSON string) is not a URL.
func beginsWithScheme(word string) bool {
	i := strings.Index(word, "://")
	if i < 1 {
		return false
	}
	for j, c := range []byte(word[:i]) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// queryKeyAfter reports whether an '=' follows the first sep in word: a
// query's or a fragment's pair, its key empty too ("#=…").
func queryKeyAfter(word string, sep byte) bool {
	i := strings.IndexByte(word, sep)
	return i >= 0 && strings.IndexByte(word[i+1:], '=') >= 0
}

// closingQuote is the index of the double quote that closes a string Go
// quoted (%q), whose opening quote came just before s: the first one no
// backslash escapes; -1 when none does.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // the escaped character
		case '"':
			return i
		case '\n':
			return -1 // neither Go nor JSON quotes a raw line break: the quote opened none
		}
	}
	return -1
}

func urlLike(word string) bool {
	q := strings.IndexByte(word, '?')
	return (q >= 0 && q < len(word)-1) || strings.IndexByte(word, '@') >= 0 || strings.Contains(word, "://") ||
		strings.Contains(word, jsonSchemeSep) || queryKeyAfter(word, '#')
}

func isWordSeparator(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>', '(', ')', '[', ']', '{', '}', ',':
		return true
	}
	return false
}

// endsEveryWord reports whether c ends a word even after it showed a URL:
// whitespace, and the double quote Go quotes a URL in.
func endsEveryWord(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"':
		return true
	}
	return false
}

// opaque redacts the userinfo of an opaque URL part, and any query or
// fragment a URL built by hand carries in it.
func opaque(op string) string {
	op, _, _ = strings.Cut(op, "#")
	rest, query, hasQuery := strings.Cut(op, "?")
	prefix := ""
	// Blanks and control bytes a reader may skip before the URL.
	lead := 0
	for lead < len(rest) && rest[lead] <= ' ' {
		lead++
	}
	if scheme, after, ok := strings.Cut(rest[lead:], "://"); ok && isScheme(scheme) {
		// An absolute URL, which net/http sends as the request's target as
		// it is: its userinfo follows the scheme.
		prefix, rest = rest[:lead]+scheme+"://", after
	} else if strings.HasPrefix(rest[lead:], "//") {
		prefix, rest = rest[:lead]+"//", rest[lead+2:]
	}
	end := len(rest)
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		end = i
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		rest, end = credentials+rest[at:], end-at+len(credentials)
	}
	if embedsUserinfo(rest[end:]) { // the opaque path holds a URL
		rest = rest[:end] + embeddedUserinfos(rest[end:])
	} else if decoded, err := url.PathUnescape(rest[end:]); err == nil && embedsUserinfo(decoded) {
		if redacted := embeddedUserinfos(decoded); redacted != decoded { // escaped: redacted as decoded
			rest = rest[:end] + (&url.URL{Path: redacted}).EscapedPath()
		}
	}
	if strings.IndexByte(rest, '%') >= 0 && EmbeddedUserinfo(rest) { // a target URL escaped before any '/' ("next:https%3A%2F%2Fu%3Apw%40h")
		rest = redactEmbedded(rest)
	}
	out := prefix + rest
	if !hasQuery || query == "" {
		return out
	}
	return appendQuery(out, query)
}

// appendQuery returns prefix + "?" + raw with every value replaced by
// Placeholder, in one pre-sized buffer. Pairs are split on '&' only, so
// empty pairs and keys without '=' stay as they were, but for a key that
// holds an '@', which may be a userinfo text glued after a '?' put there
// ("?user:pw@db"), or a target URL's userinfo escaped (a redirector's
// "/go?https%3A%2F%2Fu%3Apw%40h", whose password may hold an '='): it is
// replaced too.
func appendQuery(prefix, raw string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(raw) + (strings.Count(raw, "&")+1)*len(Placeholder))
	b.WriteString(prefix)
	b.WriteByte('?')
	for rest, more := raw, true; more; {
		var pair string
		pair, rest, more = strings.Cut(rest, "&")
		key, _, hasValue := strings.Cut(pair, "=")
		switch {
		case strings.IndexByte(key, '@') >= 0 || (strings.IndexByte(key, '%') >= 0 && EmbeddedUserinfo(key)):
			key = Placeholder
		case hasValue && strings.ContainsAny(key, "%:") && strings.Contains(decodedPath(key), "://") && EmbeddedUserinfo(pair):
			// A target that begins in the key: its userinfo may hold an
			// '=' (a base64 password) and span the cut: the pair is one
			// key.
			key, hasValue = Placeholder, false
		}
		b.WriteString(key)
		if hasValue {
			b.WriteString("=" + Placeholder)
		}
		if more {
			b.WriteByte('&')
		}
	}
	return b.String()
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".").
func isScheme(s string) bool {
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
