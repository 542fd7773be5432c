// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// SanitizeURL returns u as it may appear in telemetry, as the semantic
// conventions ask for url.full: userinfo becomes REDACTED:REDACTED (also
// when a URL built by hand carries it in Opaque or in Host, a password
// holding an @ included), every query value becomes REDACTED while the
// keys and their order stay, so a reader can still see which parameters
// were sent (a parameter without = is a key, kept as written: send a
// token in a header, not as ?token; a ; is no separator, and what follows
// it is part of the value), and the fragment is dropped (a bare ? too). A
// nil URL yields "". retryinspect displays URLs through the same
// sanitizer. It is exported so that a service's own log lines about a
// request show its URL exactly as the spans do.
func SanitizeURL(u *url.URL) string { return redact.URL(u) }

// lastURL is the last URL a Transport's operations sanitized, with its
// sanitized form: a client mostly calls the same URLs, and sanitizing one
// costs two allocations. It holds one entry, replaced on a miss, so it
// never grows; an entry is reused only for a URL equal to it in every
// field. A URL with userinfo is never kept: its password would outlive the
// request in the Transport. Operations read it concurrently.
type lastURL struct{ last atomic.Pointer[sanitizedURL] }

type sanitizedURL struct {
	u     url.URL
	clean string
}

// sanitize returns SanitizeURL(u), reusing the last one when u equals the
// URL it was made from.
func (c *lastURL) sanitize(u *url.URL) string {
	if u == nil {
		return ""
	}
	if e := c.last.Load(); e != nil && e.u == *u {
		return e.clean
	}
	clean := SanitizeURL(u)
	if u.User == nil {
		c.last.Store(&sanitizedURL{u: *u, clean: clean})
	}
	return clean
}

// sanitizeErrorText removes secrets from msg, the text of err: every URL
// of a *url.Error in err's chain (one of urls' as it is known) and each
// way urls (the URLs the request is known by) are printed whole (see
// printedForms) is replaced by its sanitized form, and
// their queries, fragments and userinfos are replaced wherever they still
// appear, percent-encoded or not (a URL an error escaped whole, a cache
// entry's name, or its query decoded), and so is each value of a query or
// a fragment of minCredentialPart bytes or more, wherever it appears
// alone but in the request's sanitized URLs. The URLs are taken in one
// pass: a second would miss what the first changed around it.
func sanitizeErrorText(msg string, err error, urls ...*url.URL) string {
	return sanitizeKnownText(msg, err, knownURLs(urls...))
}

// sanitizeKnownText is sanitizeErrorText of the request's URLs known,
// replacing the secrets of others too (credentialSecrets) in the same
// pass.
func sanitizeKnownText(msg string, err error, known []knownURL, others ...redact.Replacement) string {
	replace := func(raw string, clean string) {
		if raw == "" || raw == clean || !strings.Contains(msg, raw) {
			return
		}
		msg = strings.ReplaceAll(msg, raw, clean)
	}
	secrets := others
	for _, k := range known {
		secrets = append(secrets, spelledSecrets(k.u)...)
	}
	walkErrors(err, func(e error) {
		if ue, ok := e.(*url.Error); ok && ue.URL != "" {
			clean := sanitizeURLText(ue.URL, known)
			replace(strconv.Quote(ue.URL), strconv.Quote(clean))
			replace(ue.URL, clean)
		}
	})
	for _, k := range known {
		for _, printed := range k.printed {
			replace(printed, k.clean)
		}
	}
	msg = redact.ReplaceSpelled(msg, cleansOf(known), secrets...)
	for _, k := range known {
		for _, userinfo := range redact.EmbeddedUserinfos(k.u.Path) {
			// A proxy's target URL in the path, printed as sent: escaped
			// once or more, in whoever escaped it's spelling.
			msg = redact.RedactUserinfo(msg, userinfo)
		}
	}
	return msg
}

// knownURL is a URL the request is known by, with its sanitized form and
// the ways an error may print it whole (see printedForms).
type knownURL struct {
	u       *url.URL
	clean   string
	printed []string
}

// knownURLs are urls (nil and repeats left out), each sanitized once.
func knownURLs(urls ...*url.URL) []knownURL {
	var known []knownURL
	for i, u := range urls {
		if u != nil && !slices.Contains(urls[:i], u) {
			known = append(known, knownURL{u: u, clean: SanitizeURL(u), printed: printedForms(u)})
		}
	}
	return known
}

// cleansOf are the sanitized forms of known.
func cleansOf(known []knownURL) []string {
	cleans := make([]string, len(known))
	for i, k := range known {
		cleans[i] = k.clean
	}
	return cleans
}

// sanitizeURLText sanitizes raw, a URL an error names: as known when it
// prints one of known (the request's; read as text, an '@' in its path
// after a port reads as a userinfo's end, and names another host) or is
// one sanitized already, else as text (sanitizeRawURL).
func sanitizeURLText(raw string, known []knownURL) string {
	for _, k := range known {
		if raw == k.clean || slices.Contains(k.printed, raw) {
			return k.clean
		}
	}
	return sanitizeRawURL(raw)
}

// printedForms are the ways u is printed whole: as it is, as
// url.URL.Redacted prints it, and as net/http's Client puts it in its
// *url.Error (the password as "***"), which a base that wraps that error
// with %v repeats with its chain lost.
func printedForms(u *url.URL) []string {
	s := u.String()
	if _, ok := u.User.Password(); !ok {
		return []string{s}
	}
	return []string{s, u.Redacted(), strings.Replace(s, u.User.String()+"@", u.User.Username()+":***@", 1)}
}

// spelledSecrets are what of u an error may repeat in a spelling other
// than the URL's: its userinfo's password and user name, those of a
// target URL's userinfo in its path (a proxy's), its query (replaced by
// its sanitized form), its fragment after its '#' escaped, and the
// fragment and each value of either of minCredentialPart bytes or more
// alone.
func spelledSecrets(u *url.URL) []redact.Replacement {
	var rs []redact.Replacement
	if u.User != nil {
		name := u.User.Username()
		p, ok := u.User.Password()
		rs = userinfoPartsAlone(rs, name, p, 1)
		rs = append(rs, redact.Replacement{Of: u.User.String() + "@", With: attrs.Redacted + ":" + attrs.Redacted + "@"})
		if ok {
			rs = append(rs, redact.Replacement{Of: u.User.String(), With: attrs.Redacted + ":" + attrs.Redacted})
		}
		// The Authorization header net/http's Transport builds from the
		// userinfo, out of otelretry's sight, which a base may repeat
		// (from minCredentialPart bytes, as any value alone: a shorter
		// one would match the text's words).
		if basic := base64.StdEncoding.EncodeToString([]byte(name + ":" + p)); len(basic) >= minCredentialPart {
			rs = append(rs, redact.Replacement{Of: basic, With: attrs.Redacted})
		}
	}
	// A target URL's userinfo in the path goes whole where an '@' follows
	// it (see sanitizeKnownText), and its parts alone from
	// minCredentialPart bytes each: read by a URL parser from the path as
	// sent and its decodings, a part may be read split otherwise too (a
	// name's escaped ':' decoded), and a short one taken out alone would
	// take letters out of the text's words.
	for _, userinfo := range redact.TargetUserinfos(u.EscapedPath()) {
		p, _ := userinfo.Password()
		rs = userinfoPartsAlone(rs, userinfo.Username(), p, minCredentialPart)
	}
	frag := u.EscapedFragment()
	if u.RawQuery != "" {
		rs = append(rs, redact.Replacement{Of: u.RawQuery, With: redactedQuery(u.RawQuery)})
	}
	if frag != "" {
		// After its '#' escaped, at any length (the URL escaped whole, a
		// cache's entry name); alone from minCredentialPart bytes. A short
		// one written as it is would match prose ("certificate #1").
		rs = append(rs, redact.Replacement{Of: "#" + frag, With: "#" + attrs.Redacted, Escaped: true})
	}
	if len(frag) >= minCredentialPart {
		rs = append(rs, redact.Replacement{Of: frag, With: attrs.Redacted})
	}
	for _, part := range [...]string{u.RawQuery, frag} {
		for _, v := range redact.QueryValues(part) {
			if len(v) >= minCredentialPart {
				rs = append(rs, redact.Replacement{Of: v, With: attrs.Redacted})
			}
		}
	}
	return rs
}

// userinfoPartsAlone appends to rs a userinfo's password alone from
// minPassword bytes (1 for the request's own: any), and its user name
// alone from minCredentialPart bytes, as a
// query's value: a token is long, and a short name ("api", "git", "u") is
// a word of the text ("lookup api.example.test", "refused"), not a
// secret; it goes only with the userinfo, as url.Userinfo prints it
// ("alice:pw", "alice") before an '@' or with its password, and in a URL
// (printedForms).
func userinfoPartsAlone(rs []redact.Replacement, name, password string, minPassword int) []redact.Replacement {
	if password != "" && len(password) >= minPassword {
		rs = append(rs, redact.Replacement{Of: password, With: attrs.Redacted})
	}
	if len(name) >= minCredentialPart {
		rs = append(rs, redact.Replacement{Of: name, With: attrs.Redacted})
	}
	return rs
}

// errorTreeNodes is how many errors of a tree are visited at most: an
// Unwrap that returns its own error (or one before it, or several) is not
// followed for ever, nor into an exponential walk.
const errorTreeNodes = 256

// walkErrorTree calls visit on err and the errors of its tree, depth
// first, following both Unwrap() error and Unwrap() []error, and goes
// below an error only when visit returns true. A typed nil pointer says
// nothing and is neither visited nor unwrapped: its methods may read their
// receiver (quic-go's *http3.Error does), and a nil one would panic. A
// safeTreeError is visited as the error it stands for, and unwrapped as
// itself (its children without their typed nils).
func walkErrorTree(err error, visit func(error) bool) {
	left := errorTreeNodes
	walkErrorsFrom(err, visit, &left)
}

func walkErrorsFrom(err error, visit func(error) bool, left *int) {
	for ; err != nil && *left > 0 && !isNilPointer(err); *left-- {
		node := err
		if s, ok := err.(interface{ standsFor() error }); ok {
			node = s.standsFor()
		}
		if !visit(node) {
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			*left--
			for _, e := range u.Unwrap() {
				walkErrorsFrom(e, visit, left)
			}
			return
		default:
			return
		}
	}
}

// isNilPointer reports whether err is a typed nil of a pointer, map,
// slice, func, channel or interface kind.
func isNilPointer(err error) bool { return isNilValue(reflect.ValueOf(err)) }

// errorText is err's message; ok is false when its Error panicked: a
// base's error may hold one that cannot print itself (a typed nil whose
// Error reads its receiver, under errors.Join, which prints every error it
// holds), and reading a message is no reason to fail a request.
func errorText(err error) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	return err.Error(), true
}

// safeError is what otelretry keeps of an error a base, its body, a hook
// or the caller gives: err itself, or,
// when a typed nil is in err's tree or err cannot print itself, a
// safeTreeError in its place, so that errors.Is, errors.As, otelretry's
// own walks and the message it records never call a method of a nil
// receiver (quic-go's *http3.Error reads its receiver in Error, As and
// Unwrap, and a nil one is in some of its chains), nor fail on a message.
func safeError(err error) error {
	if isNilPointer(err) {
		return fmt.Errorf("otelretry: a nil %T was given as an error", err)
	}
	left := typedNilSearchNodes
	if _, printable := errorText(err); printable && !holdsTypedNil(err, &left) {
		return err
	}
	if _, ok := err.(net.Error); ok {
		return safeTreeNetError{safeTreeError{err}} // a net.Error stays one
	}
	return safeTreeError{err}
}

// typedNilSearchNodes is how many errors of a tree holdsTypedNil reads: a
// whole tree of any size an error carries in practice (errors.Is and
// errors.As read it all), not a cycle.
const typedNilSearchNodes = 10000

// holdsTypedNil reports whether a typed nil is below err, as far as left
// errors are read.
func holdsTypedNil(err error, left *int) bool {
	for _, k := range childErrors(err) {
		if *left--; *left < 0 {
			return false
		}
		if isNilPointer(k) || holdsTypedNil(k, left) {
			return true
		}
	}
	return false
}

// childErrors are the errors err wraps (Unwrap() error or Unwrap() []error);
// err is no typed nil.
func childErrors(err error) []error {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if k := u.Unwrap(); k != nil {
			return []error{k}
		}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

// safeTreeError stands for an error that holds a typed nil, or that cannot
// print itself (safeError). It is err to errors.Is and
// errors.As (by equality, by type, or by err's own Is and As, an answer of
// which that panicked, reaching the nil below, being no), prints err's
// message or a text of its own, and unwraps to err's children without
// their typed nils, each of them safe the same way.
type safeTreeError struct{ err error }

func (e safeTreeError) standsFor() error { return e.err }

func (e safeTreeError) Error() string {
	if msg, ok := errorText(e.err); ok {
		return msg
	}
	return fmt.Sprintf("otelretry: an error (%T) that cannot print itself: its Error method panicked", e.err)
}

func (e safeTreeError) Is(target error) bool {
	if target != nil && reflect.TypeOf(target).Comparable() && e.err == target {
		return true
	}
	x, ok := e.err.(interface{ Is(error) bool })
	return ok && noPanicAnswer(func() bool { return x.Is(target) })
}

func (e safeTreeError) As(target any) bool {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	if reflect.TypeOf(e.err).AssignableTo(v.Elem().Type()) {
		v.Elem().Set(reflect.ValueOf(e.err))
		return true
	}
	x, ok := e.err.(interface{ As(any) bool })
	if !ok || !noPanicAnswer(func() bool { return x.As(target) }) {
		return false
	}
	if found := v.Elem(); isNilValue(found) || found.Kind() == reflect.Interface && isNilValue(found.Elem()) {
		found.SetZero() // an As that handed out the nil below: no error found
		return false
	}
	return true
}

func (e safeTreeError) Unwrap() []error {
	var kids []error
	for _, k := range childErrors(e.err) {
		if k != nil && !isNilPointer(k) {
			kids = append(kids, safeError(k))
		}
	}
	return kids
}

// safeTreeNetError is a safeTreeError of a net.Error, which stays one: its
// Timeout and Temporary are err's (an answer that panicked being no).
type safeTreeNetError struct{ safeTreeError }

func (e safeTreeNetError) Timeout() bool { return noPanicAnswer(e.err.(net.Error).Timeout) }

func (e safeTreeNetError) Temporary() bool { return noPanicAnswer(e.err.(net.Error).Temporary) }

// isNilValue reports whether v is a nil of a kind that can be.
func isNilValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// noPanicAnswer is f's answer, false when f panicked.
func noPanicAnswer(f func() bool) (yes bool) {
	defer func() {
		if recover() != nil {
			yes = false
		}
	}()
	return f()
}

// walkErrors calls f on err and every error in its tree (walkErrorTree).
// It does not go into a causeOfOwn: what that holds is no evidence of the
// request (a hook's error).
func walkErrors(err error, f func(error)) {
	walkErrorTree(err, func(e error) bool {
		if w, ok := e.(withoutCause); ok {
			f(w.err) // the error itself, which f may tell by its type
		} else {
			f(e)
		}
		return true
	})
}

// holds reports whether target is err or in err's tree, as the same value
// (errors.Is, but for a target of a type == cannot compare too: a
// multi-error, a slice of errors), a causeOfOwn's included (errors.Is
// reads it by its Is, which hides ErrOutcomeUnknown; holds looks for the
// caller's cause, never that sentinel).
func holds(err, target error) bool {
	found := false
	walkErrors(err, func(e error) {
		if h, ok := e.(interface{ heldError() error }); ok && !found {
			found = holds(h.heldError(), target)
		}
		found = found || sameError(e, target)
	})
	return found
}

// tells reports whether err holds the caller's cause c and its message
// shows it (as c's sanitized text s, or c's own), as a part of its own
// (showsPart): an error of a hook's or a base's type may wrap the cause
// for errors.Is and print only its own words, which may contain the
// cause's ("unexpected EOF" around a cause "EOF").
func tells(err, c, s error) bool {
	if err == nil || !holds(err, c) {
		return false
	}
	msg, ok := errorText(err)
	if !ok {
		return false
	}
	sText, sOK := errorText(s)
	cText, cOK := errorText(c) // the caller's cause may not print itself
	return sOK && showsPart(msg, sText) || cOK && showsPart(msg, cText)
}

// showsPart reports whether part is in msg as errors chain their texts:
// from its start or after ": ", "; ", "(" or a line break, to its end or
// before ':', ';', ')' or a line break; or quoted as %q quotes it. An
// empty part shows nothing.
func showsPart(msg, part string) bool {
	if part == "" {
		return false
	}
	return chainsPart(msg, part) || strings.IndexByte(msg, '"') >= 0 && strings.Contains(msg, strconv.Quote(part))
}

// chainsPart is showsPart's reading of part as a link of msg's chain.
func chainsPart(msg, part string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], part)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(part)
		before := msg[:at]
		starts := before == "" || strings.HasSuffix(before, ": ") || strings.HasSuffix(before, "; ") ||
			strings.HasSuffix(before, "(") || strings.HasSuffix(before, "\n")
		if starts && (end == len(msg) || strings.IndexByte(":;)\n", msg[end]) >= 0) {
			return true
		}
		i = at + 1
	}
}

// withoutCause is err as errors.Is, errors.As and walkErrors see it, but
// for cause and all it wraps.
type withoutCause struct{ err, cause error }

func (w withoutCause) Error() string { return w.err.Error() }

func (w withoutCause) Unwrap() []error {
	var kids []error
	switch u := w.err.(type) {
	case interface{ Unwrap() error }:
		if k := u.Unwrap(); k != nil {
			kids = []error{k}
		}
	case interface{ Unwrap() []error }:
		kids = u.Unwrap()
	}
	out := make([]error, 0, len(kids))
	for _, k := range kids {
		if k != nil && !sameError(k, w.cause) {
			out = append(out, withoutCause{k, w.cause})
		}
	}
	return out
}

// Is and As answer for err's own node; Unwrap goes on below it.
func (w withoutCause) Is(target error) bool {
	if x, ok := w.err.(interface{ Is(error) bool }); ok && x.Is(target) {
		return true
	}
	return sameError(w.err, target)
}

func (w withoutCause) As(target any) bool {
	if x, ok := w.err.(interface{ As(any) bool }); ok && x.As(target) {
		return true
	}
	v := reflect.ValueOf(target).Elem()
	if !reflect.TypeOf(w.err).AssignableTo(v.Type()) {
		return false
	}
	v.Set(reflect.ValueOf(w.err))
	return true
}

// sameError reports whether a and b are the same error value: equal, as
// errors.Is compares them, or, for a value == cannot compare, one copy of
// it (sameBox) or deeply equal. The value is asked, not its type: a
// struct's error field may hold a slice (a multi-error), on which ==
// panics.
func sameError(a, b error) bool {
	if a == nil || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if reflect.ValueOf(a).Comparable() {
		return a == b
	}
	return sameBox(a, b) || reflect.DeepEqual(a, b)
}

// sameBox reports whether a and b, of one type == cannot compare, hold
// the same copy of their value: an interface holds such a value through a
// pointer to it, which every copy of the interface shares (context.Cause
// returns the error the caller gave, a %w wrapper keeps it). DeepEqual
// alone never calls a value with a func in it equal, not even to itself.
func sameBox(a, b error) bool {
	type iface struct{ typ, data unsafe.Pointer }
	return (*iface)(unsafe.Pointer(&a)).data == (*iface)(unsafe.Pointer(&b)).data
}

// sanitizeRawURL sanitizes a URL found as text (in an error), as
// SanitizeURL does; text that does not parse is redacted whole where it
// may carry a secret.
func sanitizeRawURL(raw string) string { return redact.String(raw) }

// redactedQuery returns raw with every value replaced by attrs.Redacted.
func redactedQuery(raw string) string {
	return strings.TrimPrefix(SanitizeURL(&url.URL{RawQuery: raw}), "?")
}

// requestText is what an error's text may repeat of a request that
// telemetry must not: the URLs the request is known by (caller, and wire,
// the prepared request's, when a PrepareAttemptFunc changed it) and its
// headers, the caller's (read on the operation's goroutine only, before
// RoundTrip returns) or those sent, whose credentials' values (see
// credentialHeader) are taken out.
type requestText struct {
	caller, wire *url.URL
	headers      [2]http.Header
	// keyHeaders name the headers holding idempotency keys, whose values
	// are replaced as a credential header's: a key is recorded only under
	// WithIdempotencyKeyValues, and then as an attribute of its own.
	keyHeaders []string
	// proxyPhrases are the texts in the error that may be a proxy's
	// reason phrase (see attempt.proxyPhrases), server text.
	proxyPhrases []string
}

// withProxyPhrases is k for an error holding phrases, texts that may be a
// proxy's reason phrase.
func (k requestText) withProxyPhrases(phrases []string) requestText {
	k.proxyPhrases = phrases
	return k
}

// proxyPhraseRedacted replaces a proxy's reason phrase in an error's text.
const proxyPhraseRedacted = "no connection: " + attrs.Redacted + " (the text of a proxy's refusal, or of a dialer's error)"

// sanitizedMessage is err's message with the URLs the request is known by
// sanitized, the values of its credential headers replaced and any other
// URL-like word in it sanitized; the whole message is replaced when it
// holds what may be a proxy's reason phrase (a standard one tells only
// the status).
func sanitizedMessage(err error, known requestText) string {
	if slices.ContainsFunc(known.proxyPhrases, func(p string) bool { return !reasonPhrase(p) }) {
		// The whole message: a layer may have quoted, cut or escaped the
		// phrase beside the copy it wrapped, where no search finds it.
		return proxyPhraseRedacted
	}
	urls := knownURLs(known.caller, known.wire)
	var credentials []redact.Replacement
	for _, h := range known.headers {
		credentials = credentialSecrets(credentials, h, known.keyHeaders)
	}
	msg := sanitizeKnownText(err.Error(), err, urls, credentials...)
	for _, h := range known.headers {
		msg = scrubShortValues(msg, h, known.keyHeaders)
	}
	return redact.TextKeeping(scrubHeaderLines(msg), cleansOf(urls)...)
}

// reasonPhrase reports whether s is a status's standard reason phrase
// ("Proxy Authentication Required"), which tells nothing but the status.
func reasonPhrase(s string) bool {
	for code := 100; code < 600; code++ {
		if t := http.StatusText(code); t != "" && t == s {
			return true
		}
	}
	return false
}

// headerToken reports whether name is a header name as RFC 9110 spells
// one (a token), which holds nothing of a value.
func headerToken(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// quotedResponseText are the texts after which net/textproto and
// net/http quote what a server sent in a response's head, whole, in an
// error: a malformed header line (its value a hint's or a cookie's; a
// reply with no status line has its first header line quoted as one), a
// header's value (Transfer-Encoding, Content-Length), over HTTP/2 a
// field name that is not one (which may hold a value) and a GOAWAY's
// debug data, over HTTP/3 (quic-go) a field's value, a :status that is no
// number and a peer's reason phrase. No header's value is recorded; of a
// line, a name that is a token is kept.
var quotedResponseText = [...]struct {
	prefix string
	// line: the quoted text is a header line, whose name is kept when it
	// is a token; name: a header name, kept when it is one; rest: the
	// text is not quoted, and runs to the end of the message. With a
	// code, the prefix is followed by an error code (kept) of those
	// characters, then by restAfter, and the text follows that.
	line, name, rest bool
	code, restAfter  string
}{
	{prefix: "malformed MIME header line: ", line: true}, {prefix: "malformed MIME header initial line: ", line: true},
	{prefix: "malformed MIME header: missing colon: ", line: true}, {prefix: "malformed HTTP response ", line: true},
	{prefix: "malformed HTTP status code "}, {prefix: "malformed HTTP version "},
	{prefix: "unsupported transfer encoding: "}, {prefix: "too many transfer encodings: "},
	{prefix: "invalid empty Content-Length "}, {prefix: "bad Content-Length "},
	{prefix: "multiple Content-Length headers; got "},
	{prefix: "invalid header field name ", name: true}, {prefix: "invalid header field value for ", name: true},
	{prefix: "invalid pseudo-header ", name: true}, {prefix: "duplicate pseudo-header ", name: true},
	// quic-go's http3:
	{prefix: "invalid header field name: ", name: true}, {prefix: "invalid trailer field name: ", name: true},
	{prefix: "invalid TE header field value: "},
	{prefix: "invalid content length: strconv.ParseUint: parsing "},
	{prefix: "contradicting content lengths (", rest: true},
	{prefix: "header field is not lower-case: ", rest: true},
	{prefix: "invalid status code: strconv.Atoi: parsing "},
	// A peer's reason phrase, which quic-go prints last: a QUIC
	// CONNECTION_CLOSE's (a transport or application error the peer
	// sent: "(remote): …", "(remote) (frame type: 0x1c): …") and an
	// HTTP/3 error's ("H3_INTERNAL_ERROR: …", "QPACK_DECOMPRESSION_FAILED:
	// …", "H3 error (0x1337): …"), which says "(local)" after its code
	// when it is not the peer's.
	{prefix: "(remote): ", rest: true},
	{prefix: "(remote) (frame type: ", rest: true, code: hexCode, restAfter: "): "},
	{prefix: "H3 error (", rest: true, code: hexCode, restAfter: "): "},
	{prefix: "H3_", rest: true, code: codeName, restAfter: ": "},
	{prefix: "QPACK_", rest: true, code: codeName, restAfter: ": "},
	{prefix: "debug="},
}

// quotesResponseText reports whether msg may hold one of the texts of
// quotedResponseText, by words each of them holds: most messages hold
// none, and are not scanned.
func quotesResponseText(msg string) bool {
	for _, w := range [...]string{"malformed ", "transfer encoding", "Content-Length", "content length", "header field", "pseudo-header",
		"trailer field", "invalid status code", "(remote)", "H3", "QPACK_", "debug="} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// scrubHeaderLines is msg with each header line or value net/http quoted
// in it (see quotedResponseText) replaced: a line by its name and REDACTED
// ("Retry-After: REDACTED"), or by REDACTED alone where no token tells a
// name; a value, or a list of them (["chunked" "…"]), by REDACTED. One
// pass, left to right: what a replaced value held is never read again (a
// server writes it, prefixes and all), and the time is linear.
func scrubHeaderLines(msg string) string {
	if !quotesResponseText(msg) {
		return msg
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(msg); i++ {
		for _, q := range quotedResponseText {
			if !strings.HasPrefix(msg[i:], q.prefix) {
				continue
			}
			start, ok := afterCode(msg, i+len(q.prefix), q.code, q.restAfter)
			if !ok {
				break
			}
			start, quoted, replaced := quotedAfter(msg, start, q.line, q.name, q.rest)
			if quoted == "" {
				break
			}
			b.WriteString(msg[last:start])
			b.WriteString(replaced)
			last = start + len(quoted)
			i = last - 1
			break
		}
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

// redactedQuoted replaces a server's text whose name cannot be told.
var redactedQuoted = strconv.Quote(attrs.Redacted)

// The characters of the error codes of quotedResponseText: a number in
// hexadecimal, a name in capitals.
const (
	hexCode  = "0123456789abcdefABCDEFx"
	codeName = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
)

// afterCode is where the text begins at start in msg, past an error code
// of the characters of code and then restAfter, and whether they are
// there; with no code, start. A code is read for 32 bytes at most, so that
// a message of prefixes, each read on from, takes linear time.
func afterCode(msg string, start int, code, restAfter string) (int, bool) {
	if code == "" {
		return start, true
	}
	n := 0
	for n < 32 && start+n < len(msg) && strings.IndexByte(code, msg[start+n]) >= 0 {
		n++
	}
	if n == 0 || !strings.HasPrefix(msg[start+n:], restAfter) {
		return start, false
	}
	return start + n + len(restAfter), true
}

// quotedAfter finds the server text that begins at start in msg, after a
// prefix of quotedResponseText (line, name, rest: its kind), and returns
// where it begins, the text as written, and what replaces it, quoted as
// the text was; quoted is "" when none begins there.
func quotedAfter(msg string, start int, line, name, rest bool) (int, string, string) {
	switch {
	case rest:
		return start, msg[start:], redactedQuoted
	case strings.HasPrefix(msg[start:], `[\"`):
		return requotedListAfter(msg, start)
	case strings.HasPrefix(msg[start:], `\`):
		return requotedAfter(msg, start, line, name)
	case name && !strings.HasPrefix(msg[start:], `"`):
		return unquotedNameAndValue(msg, start)
	}
	quoted := quotedValue(msg[start:])
	if quoted == "" {
		if !strings.HasPrefix(msg[start:], `"`) && !strings.HasPrefix(msg[start:], "[") {
			return start, "", ""
		}
		quoted = msg[start:] // not as %q writes: all of the rest may be the value
	}
	clean := attrs.Redacted
	text, err := strconv.Unquote(quoted)
	switch {
	case err != nil:
	case line:
		if n, _, ok := strings.Cut(text, ":"); ok && headerToken(n) {
			clean = n + ": " + attrs.Redacted
		} // else the colon is the value's ("Set-Cookie s=…; Expires=… 07:28"): no name told
	case name && headerToken(text):
		clean = text
	}
	return start, quoted, strconv.Quote(clean)
}

// requotedAfter reads the server text at start in msg when a layer above
// quoted the whole error again (%q, or a JSON string), so that the text's
// own quotes are escaped ("\"Set-Cookie: …\""): it reads the value once
// unescaped, as quotedAfter does, and writes what replaces it escaped
// again. An escaped quote that does not end, or is escaped more than once
// (quoted three times), leaves all of the rest to be the value.
func requotedAfter(msg string, start int, line, name bool) (int, string, string) {
	escaped, ok := requotedValue(msg[start:])
	if !ok {
		return start, msg[start:], redactedQuoted
	}
	once := strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(escaped)
	_, _, replaced := quotedAfter(once, 0, line, name, false)
	return start, escaped, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(replaced)
}

// requotedListAfter reads a list of values (%q of a []string) at start in
// msg that a layer above quoted again ([\"chunked\" \"…\"]): replaced
// whole, its replacement escaped again; a list that does not end leaves
// all of the rest to be the value.
func requotedListAfter(msg string, start int) (int, string, string) {
	s := msg[start:]
	for i := 1; i < len(s); {
		switch s[i] {
		case ']':
			return start, s[:i+1], `\"` + attrs.Redacted + `\"`
		case ' ':
			i++
		default:
			v, ok := requotedValue(s[i:])
			if !ok {
				return start, s, redactedQuoted
			}
			i += len(v)
		}
	}
	return start, s, redactedQuoted
}

// requotedValue is the quoted value s begins with, its quotes escaped once
// (\"…\"): it ends at the first quote after an odd number of backslashes
// that stand for an even number of its own (1, 5, 9, …: "\\\"" is a quote
// of its own). ok is false when s begins otherwise or the value does not
// end.
func requotedValue(s string) (string, bool) {
	if !strings.HasPrefix(s, `\"`) {
		return "", false
	}
	backslashes := 0
	for i := 2; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			backslashes++
			continue
		case s[i] == '"' && backslashes%4 == 1:
			return s[:i+1], true
		}
		backslashes = 0
	}
	return "", false
}

// unquotedNameAndValue reads quic-go's http3 form at start in msg: a
// header's name as it is, then ": " and its value quoted (invalid header
// field value for te: "…"), which quic-go writes last, or quoted again
// with the whole error by a layer above (": \"…\"", then the outer
// quote's end). The value is replaced, the name kept when the value ends
// the message; otherwise (a name that is no token, which may hold a value,
// or a value that does not end where it should) the rest of msg is. The
// name is read as far as it is a token, never further, so that a message
// of many such prefixes takes linear time.
func unquotedNameAndValue(msg string, start int) (int, string, string) {
	j := start
	for j < len(msg) && headerToken(msg[j:j+1]) {
		j++
	}
	rest := msg[j:]
	var value, after string
	switch {
	case strings.HasPrefix(rest, `: "`):
		value, after = quotedValue(rest[2:]), ""
	case strings.HasPrefix(rest, `: \"`):
		value, _ = requotedValue(rest[2:])
		after = `"`
	default:
		return start, msg[start:], redactedQuoted
	}
	end := j + 2 + len(value)
	if value == "" || !(msg[end:] == after || after != "" && strings.HasPrefix(msg[end:], after)) {
		return start, msg[start:], redactedQuoted
	}
	if after == "" {
		return j + 2, value, redactedQuoted
	}
	return j + 2, value, `\"` + attrs.Redacted + `\"`
}

// quotedValue is the double-quoted string s begins with, or the list of
// them in brackets that %q prints for a []string, "" when s begins with
// neither (%q writes no other quotes).
func quotedValue(s string) string {
	if !strings.HasPrefix(s, "[") {
		if !strings.HasPrefix(s, `"`) {
			return ""
		}
		q, _ := strconv.QuotedPrefix(s)
		return q
	}
	for i := 1; i < len(s); {
		switch s[i] {
		case ']':
			return s[:i+1]
		case ' ':
			i++
		case '"':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return ""
			}
			i += len(q)
		default:
			return ""
		}
	}
	return ""
}

// credentialWords are what the name of a header that carries a credential
// holds: Authorization, Proxy-Authorization, Cookie, X-Api-Key,
// X-Amz-Security-Token, X-Vault-Token, X-Session-Id, and those named
// otherwise: DPoP (RFC 9449), X-Jwt-Assertion, a webhook's
// X-Shopify-Hmac-Sha256, LND's Grpc-Metadata-Macaroon.
var credentialWords = [...]string{"auth", "cookie", "token", "secret", "key", "pass", "session", "signature", "credential",
	"dpop", "jwt", "hmac", "macaroon"}

// credentialHeader reports whether the header named name carries a
// credential, by its name.
func credentialHeader(name string) bool {
	name = strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// minCredentialPart is the length from which a part of a credential
// header's value (the token after "Bearer ", a cookie's value, a
// signature) is replaced on its own: shorter ones would match ordinary
// words of the text.
const minCredentialPart = 8

// minWholeValue is the length from which a credential header's value is
// replaced wherever it appears; a shorter one ("742", an order number
// under an idempotency contract) only where the header is printed with it
// (scrubShortValues).
const minWholeValue = 4

// scrubShortValues is msg with each value shorter than minWholeValue of
// h's credential headers and keyHeaders replaced where its header is
// printed with it: after the header's name in any letter case, among the
// punctuation fmt, encoding/json and the wire write around a header's
// values ("Name:[742]", `"Name":[]string{"742"}`, `"name": [ "742" ]`,
// "name: 742"), as written, as %q or encoding/json spells it, up to the
// first word that is none of its values. For each such header, linear in
// msg times the header's longest value: a word is read no further.
func scrubShortValues(msg string, h http.Header, keyHeaders []string) string {
	for name, values := range h {
		if secretHeader(name, keyHeaders) && slices.ContainsFunc(values, shortValue) {
			msg = scrubAfterName(msg, asciiLower(name), values)
		}
	}
	return msg
}

// shortValue reports whether v, trimmed, is a value shorter than
// minWholeValue.
func shortValue(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && len(v) < minWholeValue
}

// printedValues are a header's values as prints spell them: each short
// one as written, and as %q and encoding/json spell it inside their
// quotes (longest first, so that a spelling is matched whole); and the
// words a print of them may hold besides (a long value's REDACTED, %#v's
// "string").
type printedValues struct {
	short   []string
	words   []string
	longest int
}

func printedValuesOf(values []string) printedValues {
	p := printedValues{words: []string{"string", attrs.Redacted}, longest: len(attrs.Redacted)}
	for _, raw := range values {
		v := strings.TrimSpace(raw)
		if !shortValue(v) {
			p.words = append(p.words, v)
			p.longest = max(p.longest, len(v))
			continue
		}
		for _, w := range [...]string{v, raw} { // trimmed as the wire writes it, or as sent
			quoted, _ := json.Marshal(w)
			for _, s := range [...]string{w, unquoted(strconv.Quote(w)), unquoted(string(quoted))} {
				if !slices.Contains(p.short, s) {
					p.short = append(p.short, s)
				}
			}
		}
	}
	slices.SortFunc(p.short, func(a, b string) int { return len(b) - len(a) })
	return p
}

// unquoted is a quoted string's text between its quotes.
func unquoted(q string) string { return q[1 : len(q)-1] }

// shortAt is the length of the short value spelled at msg[at:] and ended
// there (by msg's end or punctuation), 0 when there is none.
func (p printedValues) shortAt(msg string, at int) int {
	for _, s := range p.short {
		if end := at + len(s); strings.HasPrefix(msg[at:], s) && (end == len(msg) || strings.IndexByte(headerPunctuation, msg[end]) >= 0) {
			return len(s)
		}
	}
	return 0
}

// scrubAfterName is msg with values' short ones replaced where they are
// printed after an occurrence of name (lowered) in msg, in any letter
// case.
func scrubAfterName(msg, name string, values []string) string {
	lower := asciiLower(msg)
	p := printedValuesOf(values)
	var b strings.Builder
	last := 0
	for from := 0; ; {
		i := strings.Index(lower[from:], name)
		if i < 0 {
			break
		}
		at := from + i + len(name)
		for at < len(msg) {
			if n := p.shortAt(msg, at); n > 0 {
				b.WriteString(msg[last:at])
				b.WriteString(attrs.Redacted)
				at += n
				last = at
				continue
			}
			if strings.IndexByte(headerPunctuation, msg[at]) >= 0 {
				at++
				continue
			}
			end := at + 1 // a word, read no further than a value may be long
			for end < len(msg) && end-at <= p.longest && strings.IndexByte(headerPunctuation, msg[end]) < 0 {
				end++
			}
			if !slices.Contains(p.words, msg[at:end]) {
				break // a word that is none of its values: the header's print ended
			}
			at = end
		}
		from = max(at, from+i+len(name))
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

// headerPunctuation is what fmt, encoding/json and the wire write around a
// header's values.
const headerPunctuation = " \t\r\n\"\\:[]{},"

// asciiLower is s with its ASCII letters lowered, byte for byte (so that
// an index in it is one in s: strings.ToLower and strings.Map would write
// an invalid byte as U+FFFD, three bytes).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// secretHeader reports whether a header of this name holds a credential
// or a key (keyHeaders).
func secretHeader(name string, keyHeaders []string) bool {
	return credentialHeader(name) || slices.ContainsFunc(keyHeaders, func(k string) bool { return strings.EqualFold(k, name) })
}

// credentialSecrets appends to rs every value of h's credential headers
// and of its keyHeaders (a base or a hook may print the request it was
// given), whole, then
// each of its parts between spaces, commas, semicolons and '=' of at
// least minCredentialPart bytes (a quoted one with its quotes and
// without): replaced with the URLs' secrets, in any spelling
// ReplaceSpelled reads (as written, as encoding/json writes it, inside a
// JSON string a server escaped otherwise, '/' as \/).
func credentialSecrets(rs []redact.Replacement, h http.Header, keyHeaders []string) []redact.Replacement {
	for name, values := range h {
		if !secretHeader(name, keyHeaders) {
			continue
		}
		for _, v := range values {
			if v = strings.TrimSpace(v); len(v) >= minWholeValue {
				rs = append(rs, redact.Replacement{Of: v, With: attrs.Redacted})
			}
			for part := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '=' }) {
				// A quoted part (Digest's response="...") is its value
				// alone too.
				for _, p := range [...]string{part, strings.Trim(part, `"`)} {
					if len(p) >= minCredentialPart {
						rs = append(rs, redact.Replacement{Of: p, With: attrs.Redacted})
					}
				}
			}
		}
	}
	return rs
}
