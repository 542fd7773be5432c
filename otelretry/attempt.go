// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// attempt is one network call of an operation.
//
// It first prepares its request (out): a copy of the caller's request with
// its own header map and context, its body (the caller's for the first
// attempt, a fresh one from GetBody, or the buffer's, for the others), run
// through the user's PrepareAttemptFunc. That prepared request is the attempt's
// one subject: the policy judges it, the wire carries it, and the attempt
// event records it.
//
// Its context is a standard context.WithCancelCause child of the
// operation's context. Once the attempt is sent, its timer (attemptTimer)
// cancels it if the answer does not come in time. The context is canceled
// for good when the attempt is released: when the caller closes the
// returned body, or when the transport is done with a response it does
// not return.
//
// The attempt sends and observes; its owner, the operation, judges what it
// observed (attemptOwner.conclude) and records it.
type attempt struct {
	setup *attemptSetup
	id    attemptID
	// at is where the operation stood when the attempt was made.
	at         progress
	start, end time.Duration // since the operation's start: sent, and answered or failed

	ctx   attemptContext
	timer attemptTimer

	copy requestCopy   // the prepared request's storage when no PrepareAttemptFunc clones it
	out  *http.Request // the prepared request
	// injected is the header map the propagators inject the attempt's
	// context into, through ownHeadersKept.
	injected http.Header
	// shown is the prepared request as a user's Classifier and Backoff
	// are shown it, with shownCtx its context (see shownRequest).
	shown    http.Request
	shownCtx answerContext
	body     io.ReadCloser // the body the attempt holds until the base takes it

	wire wire
	// span is the attempt's span: otelhttp's CLIENT span, found in the
	// context of the request that reaches innermost, or the transport's
	// own INTERNAL span.
	span trace.Span
	ev   attemptEvent
	held heldResponse
	// lostAs: the attempt's race canceled it, and the error class that
	// cancellation stands for (cutClass): race_lost once another attempt
	// won, the operation's end's when the race ended with no answer; set
	// before the cancellation, so that its error reads so.
	lostAs atomic.Value
	// cutBeforeCall: the attempt was cut (its deadline, the caller) before
	// its base was called, while the telemetry that starts it ran (a span
	// name formatter, a span processor): the base never had it.
	cutBeforeCall bool
	// uncounted: the decision's input for an answer whose Classifier
	// panicked in a race before the race judged it, as the rules alone
	// judge it, with the answer's hint: the race loop judges it in the
	// order the answers came and counts it (raceLoop.ended, judgeNow).
	uncounted    uncountedAnswer
	hasUncounted bool
}

// uncountedAnswer is what the race needs to judge and count an answer its
// Classifier did not judge.
type uncountedAnswer struct {
	in         input
	retryAfter time.Duration
	hinted     bool
}

// leaveUncounted hands the race an answer its hooks did not let the
// operation count (see uncounted). The attempt's goroutine sets it before
// it tells the race that it panicked.
func (a *attempt) leaveUncounted(u uncountedAnswer) {
	a.uncounted, a.hasUncounted = u, true
}

// attemptSetup is what every attempt of an operation shares: who judges
// it, how it is sent, and what it is made from.
type attemptSetup struct {
	owner  attemptOwner
	sender *sender
	ctx    context.Context // the operation's
	caller *http.Request   // only read and copied, on the operation's goroutine
	stop   callerSignals
	clock  *clock
	bodies bodySource
	// maxAttempts is the operation's attempt limit, for the attempt header.
	maxAttempts int
	// key and opID are the operation's idempotency key
	// (WithIdempotencyKeys) and id (WithOperationIDHeader) on the wire, zero
	// when it sends none.
	key, opID headerValue
	// own is the operation's own Intent and id: what IntentFromContext
	// and OperationIDFromContext tell its hooks (see scopeValue).
	own ownScope
}

// sendHeaders gives every attempt the operation's key and id headers, which
// the operation knows once its body was buffered (the key's repeat is told
// by its body: see repeatOf).
func (s *attemptSetup) sendHeaders(key, opID headerValue) { s.key, s.opID = key, opID }

// attemptOwner is the operation an attempt belongs to: it judges what the
// attempt came to, and records it.
type attemptOwner interface {
	// conclude judges the attempt's answer (resp, or err) and records its
	// event, once.
	conclude(a *attempt, resp *http.Response, err error) result
	// heard is told that the attempt's exchange returned (resp, or err),
	// before anything above the base runs (otelhttp records its metrics
	// with the user's meter before it hands the response up): the race
	// orders its answers by it.
	heard(a *attempt, resp *http.Response, err error)
	// lateWrites records writes on the wire the base reported after the
	// attempt's event was recorded.
	lateWrites(a *attempt, writes int32)
	// answerBroke is told that the body of the answer handed over broke
	// as the caller read it.
	answerBroke()
}

// heldResponse is the response the base returned while the transport
// holds it: its body beneath any wrapper, and the watch of its end (see
// endWatch).
type heldResponse struct {
	raw  rawBody
	late endWatch
}

// result is what one attempt came to: the response or the error (never
// both), and the verdict the transport carries out.
type result struct {
	resp *http.Response
	err  error
	v    verdict
}

// requestCopy holds an attempt's copy of the caller's request and of its
// URL, so that a hook that writes into the copy it is shown
// (Answer.Request) changes neither the caller's request nor the next
// attempt's, at no allocation of their own.
type requestCopy struct {
	req http.Request
	// url and host are the caller's, as they were when the attempt was
	// made: read by a hedge's preparation and by errors sanitized once
	// RoundTrip returned, when the caller may be reusing its request.
	url  url.URL
	host string
	// trailer is the caller's Trailer map, and trailerCopied what it held
	// then, when a PrepareAttemptFunc is shown a copy (see prepare).
	trailer, trailerCopied http.Header
}

// attemptContext is the attempt's context: the standard cancel context,
// the attempt itself for innermost to find, the boundary below which a
// call is an operation of its own (see boundary), and the attempt's
// httptrace.ClientTrace (see wire.clientTrace). Only Value is its own;
// cancellation is the embedded context's, so contexts derived from it
// (http.Transport derives one per request) attach to it directly.
type attemptContext struct {
	context.Context
	a     *attempt
	bound boundary
}

func (c *attemptContext) Value(key any) any {
	switch key {
	case attemptKey{}:
		return c.a
	case boundaryKey{}:
		return &c.bound
	case clientTraceKey:
		return c.a.wire.clientTrace(c.Context, callerTrace)
	}
	if v, ok := c.a.setup.scopeValue(key); ok {
		return v
	}
	return c.Context.Value(key)
}

// scopeValue is what a hook's context (an attempt's, a state check's)
// tells of the operation's scope for key: its own Intent and its own
// WithOperationID, which its hooks read, nil for none, never those above
// the operation's start (a call of a hook's own, below the hook's
// boundary, did not take them); ok is false for any other key.
func (s *attemptSetup) scopeValue(key any) (v any, ok bool) {
	var own ownScope
	if s != nil {
		own = s.own
	}
	return own.value(key)
}

// callerTrace is the ClientTrace of parent, the context an attempt's
// derives from, that the attempt's hooks are composed with: the caller's.
// A call made inside another attempt, through an otelretry Transport with
// that attempt's context (a base below that calls out with its request's
// context, a PrepareAttemptFunc's call with its request's), is an operation of
// its own (see boundary), and its network events are its own too: where
// parent's trace is the outer attempt's own, the call composes with the
// trace below that attempt instead, so that the outer attempt's wire never
// hears of a connection or a write that was not its request's. A trace a
// layer added over the outer attempt's was composed by httptrace with the
// outer hooks, which cannot be taken out of it: the call keeps it, and the
// outer attempt is told it was overheard (wire.overheard).
//
// It reports whether the trace is parent's own (not the one below an
// outer attempt). The lookup may reach the outer attempt's context, which
// then takes it for a layer below asking (wire.askedLive): it is told the
// ask is this call's (wire.probing).
func callerTrace(parent context.Context) (t *httptrace.ClientTrace, parents bool) {
	outer, ok := parent.Value(attemptKey{}).(*attempt)
	if ok {
		t = outer.wire.probe(parent)
	} else {
		t = httptrace.ContextClientTrace(parent)
	}
	if !ok || t == nil {
		return t, true
	}
	if t == outer.wire.ownTrace() {
		t, _ = callerTrace(outer.ctx.Context)
		return t, false
	}
	outer.wire.overhear()
	return t, true
}

// sender is how a Transport sends attempts, chosen once in NewTransport.
type sender struct {
	mode sendMode
	base http.RoundTripper
	// stacked: base is another otelretry Transport, whose error is the
	// whole story of its operation (see attempt.onlyCallBelow).
	stacked bool
	// client is otelhttp's client transport around innermost, through
	// which attempts are sent in sendThroughClient mode.
	client       http.RoundTripper
	prop         propagation.TextMapPropagator
	rec          *recorder
	prepare      PrepareAttemptFunc
	trustResends bool
	protocols    protocols
	dialect      dialect
	// attemptHeader is WithAttemptHeader's, nil without it.
	attemptHeader *attemptHeader
	// timers bounds the attempts it sends.
	timers timerQueue
	// keyHeaders are the headers the user named as holding idempotency
	// keys, whose values an error's text keeps no more than a
	// credential's (requestText).
	keyHeaders []string
	// fieldRefused: a propagator wrote a header ownHeadersKept keeps, which
	// was reported, once.
	fieldRefused atomic.Bool
}

// newAttempt makes attempt n of an operation, numbered number, with its
// context; a is the operation's storage for its first attempt, reused.
func newAttempt(a *attempt, s *attemptSetup, id attemptID, at progress) *attempt {
	if id.n > 1 {
		a = new(attempt) // the base may still hold the earlier one
	}
	a.setup, a.id, a.at = s, id, at
	cctx, cancel := context.WithCancelCause(s.ctx)
	a.timer.init(cancel, &a.held.raw, s.clock, &s.sender.timers)
	a.wire.init(wireSetup{timer: &a.timer, protocols: &s.sender.protocols, url: s.caller.URL})
	if !answersClientTrace {
		cctx = httptrace.WithClientTrace(cctx, a.wire.hooks())
	}
	a.ctx = attemptContext{Context: cctx, a: a}
	return a
}

// copyOut makes the attempt's copy of the caller's request, without its
// body yet (see takeBody), with the headers otelretry adds when asked (the
// attempt header, the operation's idempotency key and its id), before any
// PrepareAttemptFunc runs, so that a signature covers them. It runs on the
// operation's goroutine, a hedge's too: once RoundTrip returned, the caller
// may reuse its request while a hedge is still being prepared, so the
// preparation reads the copy only.
func (a *attempt) copyOut() {
	a.out = a.copyRequest()
	a.setup.sender.attemptHeader.stamp(a.out.Header, a.id.number, a.setup.maxAttempts)
	a.setup.key.stamp(a.out.Header)
	a.setup.opID.stamp(a.out.Header)
	a.wire.useURL(a.out.URL)
}

// takeBody gives the attempt's copy (copyOut) its body. It reports a body
// that could not be had (GetBody, or the buffer's read, failed).
func (a *attempt) takeBody() error {
	body, err := a.setup.bodies.forAttempt(a.id.n)
	if err != nil {
		return err
	}
	a.body = body
	a.out.Body = body
	return nil
}

// copyRequest makes the attempt's copy of the caller's request, with the
// attempt's context, no body yet and a header map of its own: a deep copy
// (Request.Clone) when a PrepareAttemptFunc may change it, else a copy held in
// the attempt, whose header map alone is cloned. Either way a.copy keeps the
// caller's URL and Host as they were.
func (a *attempt) copyRequest() *http.Request {
	req := a.setup.caller
	c := &a.copy
	c.url, c.host = *req.URL, req.Host
	if a.setup.sender.prepare != nil {
		out := req.Clone(&a.ctx)
		out.Body = nil
		c.trailer, c.trailerCopied = req.Trailer, out.Trailer.Clone()
		if out.Header == nil {
			out.Header = http.Header{}
		}
		return out
	}
	// WithContext is inlined and its copy does not escape: the request is
	// copied into a, with no allocation of its own.
	c.req = *req.WithContext(&a.ctx)
	c.req.URL = &c.url
	c.req.Body = nil
	c.req.Header = req.Header.Clone()
	if c.req.Header == nil {
		c.req.Header = http.Header{} // otelhttp and propagators write into it
	}
	a.wire.makesBodyWith(a.setup.bodies.again())
	return &c.req
}

// prepare runs the user's PrepareAttemptFunc on the attempt's copy. A body it
// replaced is closed; what makes the prepared body again (wire.source) is
// its GetBody, or the caller's when the body is still the caller's: a
// GetBody left from the caller's request refuses once the body was
// replaced, so that the caller's bytes never go out in place of the
// prepared ones.
func (a *attempt) prepare() error {
	hook := a.setup.sender.prepare
	if hook == nil {
		return nil
	}
	out, given := a.out, a.out.Body
	replaced := false
	if caller := a.setup.bodies.again(); caller != nil {
		out.GetBody = func() (io.ReadCloser, error) {
			if replaced {
				return nil, errNoPreparedBody
			}
			return caller()
		}
	}
	// The hook's context ends at the deadline with DeadlineExceeded, as a
	// context deadline does (the attempt's own context ends only when it is
	// canceled): a hook that waits on it sees the deadline it ran into.
	ctx, cancel := context.WithDeadline(&a.ctx, a.setup.clock.deadline)
	defer cancel()
	hooked := out.WithContext(ctx)
	returned := false
	defer func() {
		// A hook that panicked after it put a body in place: no call takes
		// that one, and abandon closes the caller's (a.body) alone.
		if b := hooked.Body; !returned && b != nil && b != given {
			afterPanic(func() { b.Close() })
		}
	}()
	err := hook(hooked, a.id.number)
	returned = true
	out = hooked.WithContext(&a.ctx)
	a.out = out
	if out.Header == nil {
		out.Header = http.Header{} // no headers, as the PrepareAttemptFunc meant; never a nil map below
	}
	replaced = out.Body != given
	if replaced && given != nil {
		a.body = out.Body // first: a Close that panics leaves the new one to abandon, and this one closed once
		given.Close()
	}
	if !replaced && sameHeader(out.Trailer, a.copy.trailerCopied) {
		// Clone copied the caller's Trailer map, and the values the
		// caller's body sets while it is read go into the caller's: net/http
		// writes the sent request's map after the body's EOF. Unless the
		// PrepareAttemptFunc changed the trailers, the caller's map is sent.
		// Compared with the copy made with the request's (copyOut): a
		// hedge's hook may return after RoundTrip did.
		out.Trailer = a.copy.trailer
	}
	if replaced && hasBody(out) {
		out.Body = streamedUnlessInMemory(out.Body) // the cut closes it as it closes the caller's
	}
	a.body = out.Body
	if hasBody(out) {
		a.wire.makesBodyWith(out.GetBody)
	} else {
		a.wire.makesBodyWith(nil)
	}
	a.wire.useURL(out.URL)
	return err
}

// sameHeader reports whether two header maps hold the same values.
func sameHeader(a, b http.Header) bool { return maps.EqualFunc(a, b, slices.Equal) }

// requestText is what an error of a may repeat of its request: the
// caller's URL, and the prepared request's URL and headers. Both are the
// attempt's own copies (copyOut: the caller's, and what was added): an
// error may be sanitized on a hedge's goroutine or as the caller reads the
// body, when the caller may already reuse its request.
func (a *attempt) requestText() requestText {
	return requestText{caller: &a.copy.url, wire: a.preparedURL(), headers: [2]http.Header{a.out.Header}, keyHeaders: a.setup.sender.keyHeaders}
}

// proxyPhrases are the texts in err, the base's, that may be net/http's
// refusal of a CONNECT by the proxy an https request went through:
// Transport.dialConn returns the proxy's reason phrase, text a server
// wrote (a proxy may repeat the Proxy-Authorization it got), whole as an
// errors.New, before it gets a connection. They are told by the error's
// type and place, never by their text: an https request's errors.New, or
// one a layer wrapped or joined, or a cut's cause stands beside (never one
// of otelretry's own errors wraps: a cut, the caller's cancel; nor the
// caller's cause), returned while a connection asked for under the
// attempt's context was not had (by any call: a layer's own calls with
// that context are not told from the request, so one whose dial failed
// makes the request's own text taken too, the safe side), with no TLS
// handshake heard failing (a CONNECT is refused
// before the handshake with the host, and after a proxy's own succeeded),
// by net/http's Transport with a Proxy or by any other base, which may
// wrap one out of sight (otelhttp's, under WithoutClientSpans) and asks
// for the connection as net/http does. Which proxy, if any, the request
// went through is not asked again (Proxy is the user's code, and may
// answer otherwise a second time), so a dialer's own errors.New there is
// taken for one too. Once the caller closed the legacy Request.Cancel
// (http.Client's Timeout does), net/http's error is its own text for that
// cancel, and none is taken (a refusal that came as the cancel did keeps
// its text). An error holding one has its whole text replaced (see
// sanitizedMessage).
func (a *attempt) proxyPhrases(err error) []string {
	if a.out == nil || a.out.URL.Scheme != "https" || !a.wire.waitsForConn() ||
		a.wire.failedHandshake(err) || a.setup.stop.legacyCanceled() {
		return nil
	}
	if ht, ok := a.setup.sender.base.(*http.Transport); ok && ht.Proxy == nil {
		return nil // net/http's Transport itself, with no proxy to refuse a CONNECT
	}
	return phrasesIn(err, a.setup.stop.givenCause())
}

// phrasesIn returns the texts of the errors.News in err's tree, as
// errors.Is walks it (one wrapped error or several: a layer's errors.Join,
// a cut's cause beside the base's error; walkErrorTree), but a sentinel of
// io's or context's and the caller's cause (callerCause, which net/http
// returns as its error when the caller cancels), and those an error of
// otelretry's own wraps.
func phrasesIn(err, callerCause error) []string {
	var out []string
	walkErrorTree(err, func(e error) bool {
		if ownError(e) || callerCause != nil && sameError(e, callerCause) {
			return false
		}
		if reflect.TypeOf(e) == errorStringType && e != io.EOF && e != io.ErrUnexpectedEOF && e != context.Canceled {
			out = append(out, e.Error())
		}
		return true
	})
	return out
}

// ownError reports whether err is of a type of package otelretry's own.
func ownError(err error) bool {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == ownPackage
}

// ownPackage is package otelretry's import path, as its types report it.
var ownPackage = reflect.TypeOf(Error{}).PkgPath()

// refusedByTransport reports whether err, the base's, is net/http's
// Transport refusing the request itself: told by the place, the error's
// type and the request, never by the error's text. The base is net/http's
// Transport, which asks for a connection (GetConn) for every request it
// accepts and returned before it did, and took none nor wrote anything
// (an HTTP/2 connection a canceled request's dial left in the pool is
// taken without a GetConn), the error is the attempt's own (not the
// caller's cancel, nor a cut), no call inside the attempt was overheard,
// and the request breaks a rule it checks first (transportRefuses); or it
// took an HTTP/2 connection and refused, before writing the headers, a
// field HTTP/2 forbids (h2Refuses). The same request is refused again,
// and the host saw nothing of it. Below a layer that wraps it (otelhttp's
// Transport, under WithoutClientSpans), net/http's Transport is known by
// its first step: it asks the request's context for its ClientTrace
// before it checks anything (reachedTrace); as any base may ask so, only
// what no HTTP client sends (a field, a trailer or a method net/http
// refuses, a scheme its own error names) is taken for its refusal there,
// never a request with no host, which a base of one's own may route (a
// Unix socket's).
func (a *attempt) refusedByTransport(own error) bool {
	w := &a.wire
	base := a.overNetHTTP()
	if !(base || w.reachedTrace()) || !a.failedUnwritten(own) {
		return false
	}
	if !w.gotConn.Load() {
		return !w.askedConn.Load() && transportRefuses(a.out, own, base)
	}
	return w.connHTTP2.Load() && h2Refuses(a.out, own)
}

// failedUnwritten reports whether own is the attempt's own error (not the
// caller's cancel, nor a cut) and the base wrote nothing of the request:
// no headers, no write, no call inside the attempt overheard.
func (a *attempt) failedUnwritten(own error) bool {
	w := &a.wire
	return own != nil && !a.cutBeforeCall && a.out != nil && !a.timer.timedOut() &&
		!w.headersOut.Load() && w.writes.Load() == 0 && !w.overheard.Load()
}

// h2Refuses reports whether net/http's HTTP/2 client refused r, which
// failed with err on an HTTP/2 connection before its headers were
// written, its refusal an errors.New that fmt.Errorf("http2: %w") wraps:
// a field HTTP/2 forbids and HTTP/1 sends (h2ForbiddenField), a host it
// does not accept, a :path it cannot make, or a header list over the
// peer's advertised limit. That limit is the connection's, which
// otelretry cannot read: the refusal is told by its error, whose whole
// text is its only identity (compared whole, as serverClosedIdle does).
func h2Refuses(r *http.Request, err error) bool {
	if reflect.TypeOf(err) != wrapErrorType || reflect.TypeOf(errors.Unwrap(err)) != errorStringType {
		return false
	}
	if errors.Unwrap(err).Error() == "request header list larger than peer's advertised limit" {
		return true
	}
	host := r.Host
	if host == "" && r.URL != nil {
		host = r.URL.Host
	}
	return h2ForbiddenField(r.Header, r.Trailer) || !validHostBytes(host) || !h2Path(r, host)
}

// h2Path reports whether net/http's HTTP/2 client makes r's :path, as it
// checks it: a CONNECT has none; else the URL's request URI, or what
// follows its scheme and host in it, begins with a '/' or is "*". The
// host it strips is punycode, which otelretry does not compute: a host
// outside ASCII passes (its refusal is retried, never a send refused).
func h2Path(r *http.Request, host string) bool {
	if r.Method == http.MethodConnect && (len(r.Header[":protocol"]) == 0 || r.Header[":protocol"][0] == "") ||
		r.URL == nil || !isASCII(host) {
		return true
	}
	valid := func(p string) bool { return strings.HasPrefix(p, "/") || p == "*" }
	path := r.URL.RequestURI()
	return valid(path) || valid(strings.TrimPrefix(path, r.URL.Scheme+"://"+host))
}

// h2ForbiddenField reports whether a request with header h and trailer t
// carries a field HTTP/2 forbids, as net/http checks them: an Upgrade, a
// Transfer-Encoding other than chunked, a Connection other than close or
// keep-alive; a trailer named Transfer-Encoding, Trailer or
// Content-Length.
func h2ForbiddenField(h, t http.Header) bool {
	upgrade, encoding, connection := h["Upgrade"], h["Transfer-Encoding"], h["Connection"]
	switch {
	case len(upgrade) > 0 && upgrade[0] != "" && upgrade[0] != "chunked": // as net/http reads it
		return true
	case len(encoding) > 1 || len(encoding) == 1 && encoding[0] != "" && encoding[0] != "chunked":
		return true
	case len(connection) > 1:
		return true
	case len(connection) == 1 && connection[0] != "" &&
		!asciiEqualFold(connection[0], "close") && !asciiEqualFold(connection[0], "keep-alive"):
		return true
	}
	for k := range t {
		switch http.CanonicalHeaderKey(k) {
		case "Transfer-Encoding", "Trailer", "Content-Length":
			return true
		}
	}
	return false
}

// validHostBytes reports whether host's ASCII bytes are all bytes
// net/http accepts in a Host (httpguts.ValidHostHeader). Its bytes
// outside ASCII it converts first (punycode, all valid bytes; a failure
// there is no errors.New), keeping the port as it is.
func validHostBytes(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c < 0x80 && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!$%&'()*+,-.:;=[]_~", c) >= 0) {
			return false
		}
	}
	return true
}

// isASCII reports whether s holds ASCII bytes alone.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// wrapErrorType is the type of fmt.Errorf's errors that wrap one.
var wrapErrorType = reflect.TypeOf(fmt.Errorf("%w", errors.New("")))

// transportRefuses reports whether net/http's Transport refused r, which
// failed with err before it asked for a connection: no header map; for
// http and https, a field or trailer name that is no token or a value
// holding a control character, a method that is no token, or no host;
// another scheme, when err is its "unsupported protocol scheme" (a
// protocol registered for the scheme with RegisterProtocol gets the
// request first, and its failure may pass). Unless it is the base itself
// (base), only the fields, the method and the scheme are read.
func transportRefuses(r *http.Request, err error, base bool) bool {
	u := r.URL
	switch {
	case u == nil || r.Header == nil:
		return base
	case !httpScheme(u):
		return reflect.TypeOf(err) == unsupportedSchemeType()
	}
	// Its refusals of these are errors.New and fmt.Errorf's, and a
	// protocol registered for http or https (RegisterProtocol) gets a
	// request with a bad method or no host before it checks them.
	return reflect.TypeOf(err) == errorStringType &&
		(base && u.Host == "" || r.Method != "" && !validToken(r.Method) || !sendableFields(r.Header) || !sendableFields(r.Trailer))
}

// unsupportedSchemeType is the type of net/http's Transport's error for a
// scheme it has no protocol for (unexported), read once from a Transport
// of its own: the error is told by its type, never its text.
var unsupportedSchemeType = sync.OnceValue(func() reflect.Type {
	_, err := (&http.Transport{}).RoundTrip(&http.Request{URL: &url.URL{Scheme: "otelretry-none", Host: "h"}, Header: http.Header{}})
	return reflect.TypeOf(err)
})

// fieldsGuarded reports whether the attempt's fields are checked after its
// PrepareAttemptFunc: there is one, the base is net/http's Transport and
// the request goes over http or https, and, but for a hedge, before the
// hook net/http would send them all (the caller's own unsendable field is
// sent and refused, row 24; a hedge refused there would keep its token,
// whatever made its fields unsendable). Asked before the hook runs.
func (a *attempt) fieldsGuarded(hedge bool) bool {
	u := a.out.URL
	return a.overNetHTTP() && a.setup.sender.prepare != nil && u != nil && httpScheme(u) && (hedge || fieldsSendable(a.out))
}

// overNetHTTP reports whether the base is net/http's Transport, whose
// refusals of a request refusedByTransport and fieldsGuarded know.
func (a *attempt) overNetHTTP() bool {
	_, ok := a.setup.sender.base.(*http.Transport)
	return ok
}

// httpScheme reports whether u is http or https, the schemes net/http's
// Transport checks a request's fields for.
func httpScheme(u *url.URL) bool { return u.Scheme == "http" || u.Scheme == "https" }

// fieldsSendable reports whether net/http sends r's header and trailer.
func fieldsSendable(r *http.Request) bool {
	return sendableFields(r.Header) && sendableFields(r.Trailer)
}

// sendableFields reports whether net/http sends every field of h: names
// that are tokens, values with no control character but the tab.
func sendableFields(h http.Header) bool {
	for name, values := range h {
		if !validHeaderName(name) {
			return false
		}
		for _, v := range values {
			if !sendableValue(v) {
				return false
			}
		}
	}
	return true
}

// preparedURL is the URL a PrepareAttemptFunc may have changed, for the attempt
// event and errors to sanitize; nil when no PrepareAttemptFunc ran, and the URL
// is the caller's, sanitized once per operation.
func (a *attempt) preparedURL() *url.URL {
	if a.setup.sender.prepare == nil || a.out == nil {
		return nil
	}
	return a.out.URL
}

// launch makes the prepared attempt ready to send under policy p: its
// timer starts, its resend guard is set up (as planResends says), its
// hooks go live, and it gets its own span when the transport makes
// attempt spans.
func (a *attempt) launch(p requestPolicy) {
	a.start = a.setup.clock.since()
	a.timer.start(p.cutRetryable, hasBody(a.out), p.attemptTimeout, p.checkDelay, a.start)
	a.wire.guard(a.out, guardsResends(p.repeatable, a.setup.sender.trustResends), &a.setup.sender.protocols)
	if a.setup.sender.mode == sendWithOwnSpan {
		ctx, span := a.setup.sender.rec.startAttemptSpan(a.out.Context(), a.out) // the attempt's request, as otelhttp's formatter gets
		a.span = span
		a.out = a.out.WithContext(ctx)
	}
}

// send sends the prepared attempt in the Transport's mode and returns what
// came of it, as its owner concluded it.
func (a *attempt) send() result {
	s, owner := a.setup.sender, a.setup.owner
	switch s.mode {
	case sendThroughClient:
		resp, err := s.client.RoundTrip(a.out)
		if err == nil {
			// otelhttp's span stays open until the body is read: the
			// attempt is concluded on it now.
			return owner.conclude(a, resp, nil)
		}
		if ae, ok := err.(*attemptError); ok && ae.decided {
			// Concluded inside, while otelhttp's span was open.
			return result{err: ae, v: ae.verdict}
		}
		owner.heard(a, nil, err) // otelhttp failed without reaching the base
		return owner.conclude(a, nil, err)
	}
	// Injected here with the transport's propagators (WithPropagators), as
	// otelhttp's client transport would; an instrumented base injects its
	// own after.
	a.injected = a.out.Header
	s.prop.Inject(a.out.Context(), (*ownHeadersKept)(a))
	a.injected = nil
	resp, err := a.exchange(a.out)
	if err == nil {
		a.watchEnd(resp)
	}
	return owner.conclude(a, resp, err)
}

// innermost is the RoundTripper inside otelhttp: it sends each attempt to
// the base. An attempt that failed is concluded here, while otelhttp's
// CLIENT span is still open (otelhttp ends it as soon as an error comes
// back), and its verdict goes back up inside the returned *attemptError.
type innermost struct{ s *sender }

// spanNoting is the propagator otelhttp injects with: it tells the attempt
// its CLIENT span, which otelhttp has started by then, before the user's
// Inject runs, so that a propagator that panics leaves no span open
// (otelhttp ends none on a panic; the attempt's panic path does).
type spanNoting struct {
	propagation.TextMapPropagator
	s *sender
}

func (p spanNoting) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	a, ok := ctx.Value(attemptKey{}).(*attempt)
	ok = ok && a.setup.sender == p.s
	if ok {
		a.span = trace.SpanFromContext(ctx)
	}
	if h, isHeader := carrier.(propagation.HeaderCarrier); isHeader {
		if ok {
			a.injected = http.Header(h)
			carrier = (*ownHeadersKept)(a)
		} else {
			carrier = fieldReplacingCarrier(h)
		}
	}
	p.TextMapPropagator.Inject(ctx, carrier)
	if ok {
		a.injected = nil
	}
}

// ownHeadersKept is the carrier otelretry's propagators inject an
// attempt's context into: as fieldReplacingCarrier, but for the headers
// that hold idempotency keys (a key otelretry generated, or the caller's)
// and those otelretry adds (the attempt's number, the operation's id),
// which stay as they are in every spelling: a propagator that writes one
// (a global set after NewTransport, one whose Fields leave it out) would
// give each attempt a key, or an id, of its own. It is the attempt itself,
// injecting into a.injected, so that injecting allocates nothing.
type ownHeadersKept attempt

func (c *ownHeadersKept) Get(key string) string { return c.injected.Get(key) }

func (c *ownHeadersKept) Keys() []string { return fieldReplacingCarrier(c.injected).Keys() }

func (c *ownHeadersKept) Set(key, value string) {
	a := (*attempt)(c)
	if !a.ownsHeader(key) {
		fieldReplacingCarrier(c.injected).Set(key, value)
		return
	}
	// A field NewTransport could not refuse (a global propagator set
	// after it, Fields that leave it out): lost, so said, once.
	if a.setup.sender.fieldRefused.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("otelretry: a propagator wrote %s, a header that holds idempotency keys or that otelretry adds: it was left as it was, and the propagator's field not sent", shownName(key)))
	}
}

// ownsHeader reports whether name, in any spelling, is a header that holds
// idempotency keys or one otelretry adds to a's request.
func (a *attempt) ownsHeader(name string) bool {
	s := a.setup.sender
	return s.namesAKey(name) || s.attemptHeader != nil && asciiEqualFold(name, s.attemptHeader.name) ||
		a.setup.opID.name != "" && asciiEqualFold(name, a.setup.opID.name)
}

// fieldReplacingCarrier is the carrier otelretry's propagators inject the
// attempt's context into: a field they set replaces the caller's under
// any spelling of its name. The attempt's header is a copy of the
// caller's, and a caller's "traceparent" set into the map as it is would
// otherwise go on the wire beside the attempt's "Traceparent" (net/http
// writes both).
type fieldReplacingCarrier http.Header

func (c fieldReplacingCarrier) Get(key string) string { return http.Header(c).Get(key) }

func (c fieldReplacingCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

func (c fieldReplacingCarrier) Set(key, value string) {
	h := http.Header(c)
	canonical := http.CanonicalHeaderKey(key)
	for k := range h {
		if k != canonical && asciiEqualFold(k, canonical) {
			delete(h, k)
		}
	}
	h[canonical] = []string{value} // as Header.Set
}

func (i innermost) RoundTrip(r *http.Request) (*http.Response, error) {
	a, ok := r.Context().Value(attemptKey{}).(*attempt)
	if !ok || a.setup.sender != i.s {
		return i.s.base.RoundTrip(r)
	}
	a.span = trace.SpanFromContext(r.Context())
	// otelhttp's clone copied the Trailer map, which the body fills as it
	// is read: net/http writes the map of the request it sends.
	r.Trailer = a.out.Trailer
	resp, err := a.exchange(r)
	if err != nil {
		res := a.setup.owner.conclude(a, nil, err)
		return nil, res.err
	}
	a.watchEnd(resp)
	return resp, nil
}

// exchange sends r, the prepared request as it reaches the innermost
// layer, to the base and returns what came back: a usable response or an
// error, never both.
func (a *attempt) exchange(r *http.Request) (*http.Response, error) {
	a.body = nil // the base owns the body now
	base := a.setup.sender.base
	var resp *http.Response
	var err error
	if err = context.Cause(r.Context()); err != nil {
		// Cut already: the base is not called, so the cut proves the
		// request never left (a base given a done context may still
		// have begun).
		a.cutBeforeCall = true
		if r.Body != nil {
			r.Body.Close()
		}
	} else if b, streamed := a.out.Body.(*streamedBody); streamed {
		resp, err = a.sendStreaming(base, r, b)
	} else {
		resp, err = base.RoundTrip(r)
	}
	a.end = a.setup.clock.since()
	timedOut := a.timer.answered()
	resp, err = usableResponse(base, resp, err, methodOf(r))
	var caller error
	cut := cutByBase
	if err != nil || timedOut {
		caller = a.setup.stop.err(a.setup.clock)
		cut = whatCut(a.timer.cut(), caller, a.setup.clock.callerBound)
	}
	drop, err := settleCut(cut, timedOut, caller, err)
	if drop {
		closeResponse(resp)
		resp = nil
	} else if err == nil {
		resp.Body = a.held.raw.hold(resp.Body, a.requestText())
	}
	a.setup.owner.heard(a, resp, err)
	return resp, err
}

// sendStreaming sends r, whose body b is not held in memory, to the base,
// with the cut set to close the body the base reads. A base that failed
// (or panicked) is done with it; after an answer the cut stays set until
// the attempt's end, the operation's: a base may still write the body
// then (net/http, to a server that answered before it read it), and one
// that stalls would be held for ever.
func (a *attempt) sendStreaming(base http.RoundTripper, r *http.Request, b *streamedBody) (resp *http.Response, err error) {
	stop := a.wire.closeStreamingAtCut(r.Context(), b)
	defer func() {
		if resp == nil {
			stop()
		}
	}()
	return base.RoundTrip(r)
}

// callerSignals is how the caller tells an operation to stop: its
// request's context and legacy Cancel channel, read from the request once,
// when the operation begins, so that what asks later (a hedge prepared
// after RoundTrip returned) never reads the request the caller may reuse.
type callerSignals struct {
	ctx    context.Context
	cancel <-chan struct{} // nil, and never ready, unless http.Client set it
}

func callerSignalsOf(req *http.Request) callerSignals {
	return callerSignals{ctx: req.Context(), cancel: req.Cancel}
}

// givenCause is the cause the caller gave its context when it canceled
// it (context.WithCancelCause, errgroup's first error), nil for none: a
// plain cancel's or deadline's cause is the context's own error.
func (s callerSignals) givenCause() error {
	if c := context.Cause(s.ctx); c != nil && !sameError(c, s.ctx.Err()) {
		return c
	}
	return nil
}

// causeIn reports whether err carries the cause the caller gave its
// context, which a base may return as its error: the caller's, not about
// the request (errgroup's is a sibling's error).
func (s callerSignals) causeIn(err error) bool {
	c := s.givenCause()
	return c != nil && holds(err, c)
}

// ownPart is err without the caller's given cause in it, for reading what
// err proves of the request: err itself when it carries none, nil when it
// is that cause.
func (s callerSignals) ownPart(err error) error {
	c := s.givenCause()
	switch {
	case c == nil || !holds(err, c):
		return err
	case sameError(err, c):
		return nil
	}
	return withoutCause{err, c}
}

// legacyCanceled reports whether the caller closed the legacy
// Request.Cancel channel (http.Client's Timeout does, over a RoundTripper
// that is not *http.Transport).
func (s callerSignals) legacyCanceled() bool {
	if s.cancel == nil {
		return false
	}
	select {
	case <-s.cancel:
		return true
	default:
		return false
	}
}

// err is the caller's reason to stop: its context's error, or, when
// http.Client's Timeout closed the legacy Request.Cancel channel before
// the context noticed (it does, for a RoundTripper that is not
// *http.Transport), the error that context is about to report (c is the
// operation's clock).
func (s callerSignals) err(c *clock) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.legacyCanceled() {
		if d, ok := s.ctx.Deadline(); ok && c.since() >= d.Sub(c.start) {
			return context.DeadlineExceeded
		}
		return context.Canceled
	}
	return nil
}

// usableResponse checks what a base returned as http.Client and otelhttp
// do: a response with an error is closed and the error wins; a nil
// response, a status outside 100–999 or a nil body with a length are
// errors.
func usableResponse(base http.RoundTripper, resp *http.Response, err error, method string) (*http.Response, error) {
	switch {
	case err != nil:
		closeResponse(resp)
		return nil, safeError(err)
	case resp == nil:
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a nil *Response with a nil error", base)
	case resp.StatusCode < 100 || resp.StatusCode > 999:
		closeResponse(resp)
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a response with status %d", base, resp.StatusCode)
	case resp.Body == nil && resp.ContentLength > 0 && method != http.MethodHead:
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", base, resp.ContentLength)
	case resp.Body == nil:
		resp.Body = http.NoBody
	}
	return resp, nil
}

// watchEnd wraps, under otelhttp's body wrapper (or, without client
// spans, around the base's body), the body of a response whose base
// reports its writes, when its span records or a logger is set, so that
// writes reported after the headers are recorded (see endWatch). A base
// that reported nothing through httptrace will not report late.
func (a *attempt) watchEnd(resp *http.Response) {
	if !a.wire.reportsWrites() || !(a.span != nil && a.span.IsRecording()) && !a.setup.sender.rec.logs() {
		return
	}
	if _, rw := resp.Body.(io.ReadWriteCloser); rw {
		return
	}
	// The wrapper lives in the attempt, which outlives the body.
	a.held.late = endWatch{ReadCloser: resp.Body, answer: &a.ev, end: a.bodyEnded}
	resp.Body = &a.held.late
}

// bodyEnded is the end of a watched body: writes the base reported since
// the attempt's event was recorded are recorded now.
func (a *attempt) bodyEnded() {
	if now := a.wire.writesSoFar(); now > a.ev.writes {
		a.setup.owner.lateWrites(a, now)
	}
}

// bodyBroke tells the operation that the answer's body broke (unless the
// caller had closed it: then the caller stopped it), and keeps
// error.type on the attempt's CLIENT span in the
// vocabulary when the body handed over breaks as the caller reads it:
// otelhttp's body wrapper, below the handed-over body, has just recorded
// the read error's Go type there. The answer's own error.type (a failed
// answer's) or the read error's class replaces it; the caller gets the
// error itself.
func (a *attempt) bodyBroke(err error, closed bool) {
	if !closed {
		a.setup.owner.answerBroke()
	}
	if a.setup.sender.mode != sendThroughClient || a.span == nil || !a.span.IsRecording() {
		return
	}
	t := a.ev.errorType()
	if t == "" {
		t = string(classify(err))
	}
	a.span.SetAttributes(attrs.ErrorTypeKey.String(t))
}

// bodyClosing records the late writes (see endWatch) when the caller
// closes the body before its end: otelhttp's wrapper, below, ends the span
// first thing in its Close.
func (a *attempt) bodyClosing() { a.held.late.ended() }

func (a *attempt) closeBase() { a.held.raw.close() }

// observe gathers what the attempt saw: its timing, what came back and
// what the base reported of the wire.
func (a *attempt) observe(resp *http.Response, err error) observation {
	w := &a.wire
	seen := attemptSeen{
		number: a.id.number, start: a.start, end: a.end, remaining: a.setup.clock.limit - a.start,
		url: a.preparedURL(), timedOut: a.timer.timedOut(),
		writes: w.writesSoFar(), written: w.reachedWire(), reportsWrites: w.reportsWrites(),
		silent: w.silent() && !a.overNetHTTP(),
	}
	if err != nil {
		return a.observeFailure(seen, err)
	}
	return seen.response(resp, a.setup.clock.at(a.end), &a.setup.sender.dialect)
}

// requestBodyBroke reports whether a body of the attempt's request that
// was not held in memory failed as the base read it: its own, or a copy a
// layer below took to resend it (see wire.bodyBroke).
func (a *attempt) requestBodyBroke() bool {
	own, _ := a.out.Body.(*streamedBody)
	return a.wire.bodyBroke(own)
}

// observeFailure is observe for an attempt that got no response: what err
// proves of this request, never the cause the caller canceled with, which
// a base may return in it (net/http returns context.Cause; errgroup's is a
// sibling's error).
func (a *attempt) observeFailure(seen attemptSeen, err error) observation {
	own := a.setup.stop.ownPart(err)
	class := classify(err)
	unsent, evidence, proved := a.proofIn(err, own)
	var belowUnsent bool
	var below attrs.Reason
	if a.onlyCallBelow() {
		belowUnsent, below = unsentBelow(own)
	}
	if !a.cutBeforeCall && own != nil && !belowUnsent && (errors.Is(own, ErrOutcomeUnknown) || triedBelow(own) || a.requestBodyBroke()) {
		// A base's error that claims an unknown outcome (another
		// otelretry Transport below, about this write), or another
		// otelretry operation's that made attempts, says the write may
		// have been applied, whatever the last of its attempts met: an
		// earlier one may have been answered or cut. So does a request
		// whose own body broke as the base read it: the server may have
		// begun on what it got, and a code in the error may be the
		// body's (a proxy's upstream refusing its stream), not this
		// server's.
		unsent, seen = false, seen.mayHaveLanded()
		evidence, proved = Evidence{}, false
		if class.NotSent() {
			class = attrs.ErrorClassOther
		}
	}
	// An otelretry Transport below that was never built (errNotBuilt)
	// refuses every request as net/http's own checks do.
	byTransport := a.refusedByTransport(own) || below == attrs.ReasonInvalidRequest || errors.Is(own, errNotBuilt)
	refused := refusal{byTransport: byTransport, certificate: certificateRejected(own)}
	return seen.failure(err, class, unsent || belowUnsent, refused, evidence, proved)
}

// proofIn is what err, the attempt's failure, and own, its part that is
// not the caller's cause, prove of the request: that it never left (a
// cut before the call, the trace, the error's class or place), and the
// protocol's evidence that it was not processed.
func (a *attempt) proofIn(err, own error) (unsent bool, evidence Evidence, proved bool) {
	w := &a.wire
	unsent = a.cutBeforeCall || w.unsentByTrace(err)
	if own == nil {
		return unsent, Evidence{}, false
	}
	unsent = unsent || neverSent(own, classify(own)) || a.closedIdleUnwritten(own)
	if len(a.proxyPhrases(err)) == 0 { // a proxy's phrase is its own text, whatever it says
		evidence, proved = h2Unprocessed(own, w.usedNoGetBodyForEvidence())
	}
	return unsent, evidence, proved
}

// closedIdleUnwritten reports whether own is net/http's "server closed
// idle connection" met where net/http meets it: on a connection the
// attempt's trace saw it take (GotConn). Its text alone is anyone's (a
// base of one's own that sent the write on a connection of its own, out of
// the trace, may return an error so worded): it proves nothing without
// the trace.
func (a *attempt) closedIdleUnwritten(own error) bool {
	return a.wire.gotConn.Load() && serverClosedIdle(own)
}

// onlyCallBelow reports whether the attempt's base is another otelretry
// Transport, the only operation the attempt made below it, and no
// connection of the attempt's own was heard: that operation's error is
// then the whole story of what went below. A layer between may have done
// anything out of sight (a failover that made two, a client that reports
// nothing and sent the write before a side call it returns the error of).
func (a *attempt) onlyCallBelow() bool {
	w := &a.wire
	return a.setup.sender.stacked && a.ctx.bound.operations.Load() == 1 && !w.gotConn.Load() && w.writes.Load() == 0 && !w.overheard.Load()
}

// unsentBelow reports whether err is the error of another otelretry
// operation (a Transport below, the only one the attempt made) that sent
// nothing: its admission refused its first attempt (its throttle or
// budget), before anything about it started, or its one attempt was
// refused by net/http's Transport (invalid_request) or met a certificate
// the client rejected; and the reason of such a refusal, which the same
// request meets again ("" otherwise). An operation whose hook failed
// (prepare_failed, key_conflict) made no attempt, but the hook may have
// sent anything: it proves nothing.
func unsentBelow(err error) (unsent bool, refusal attrs.Reason) {
	var below *Error
	switch {
	case !errors.As(err, &below):
		return false, ""
	case below.Attempts == 0:
		return below.Outcome == attrs.OutcomeThrottled || below.Outcome == attrs.OutcomeBudgetExhausted, ""
	case below.Attempts == 1 && below.Outcome == attrs.OutcomeStop &&
		(below.Reason == attrs.ReasonInvalidRequest || below.Reason == attrs.ReasonCertificate):
		return true, below.Reason
	}
	return false, ""
}

// triedBelow reports whether err is the error of another otelretry
// operation (a Transport below) that made attempts: what its last attempt
// met, a dial error or a hook's failure, proves nothing of its earlier
// ones.
func triedBelow(err error) bool {
	var below *Error
	return errors.As(err, &below) && below.Attempts > 0
}

// answer is the attempt's answer as the hooks see it: a status and its
// Retry-After, or an error and its class (as recorded). ownHooks: a
// user's Classifier or Backoff judges it (see shownRequest).
func (a *attempt) answer(o *observation, class attrs.ErrorClass, ownHooks bool) Answer {
	req := a.shownRequest(ownHooks)
	if o.err != nil {
		return Answer{Request: req, Attempt: a.id.number, PreviousPause: a.at.lastPause(), Err: o.err, ErrorClass: class}
	}
	return Answer{Request: req, Attempt: a.id.number, PreviousPause: a.at.lastPause(),
		StatusCode: o.status, Header: o.header, RetryAfter: o.retryAfter, contentLength: o.contentLength}
}

// shownRequest is the request the hooks that judge the answer are shown:
// for a user's Classifier or Backoff, which may call out with its
// context, the prepared request with an answerContext, which the caller
// ends once they returned (endShown); for otelretry's own, the prepared
// request itself.
func (a *attempt) shownRequest(ownHooks bool) *http.Request {
	if !ownHooks {
		return a.out
	}
	a.shownCtx.init(a.setup.ctx, a.setup.clock.deadline, a.setup.own)
	a.shown = *a.out.WithContext(&a.shownCtx)
	return &a.shown
}

// endShown ends the context of the request the hooks were shown.
func (a *attempt) endShown() { a.shownCtx.end() }

// concluded keeps the attempt's event, built in place from what it
// observed once its owner judged it (see newAttemptEvent).
func (a *attempt) concluded(o *observation, class attrs.ErrorClass, evidence Evidence, v verdict) {
	a.ev = newAttemptEvent(o, class, evidence, v)
}

// discard drains (at most maxDrain bytes, until bound after the answer:
// the verdict's drain) and closes a response that will not be returned, so that its
// connection can be reused and its client span ends, then releases the
// attempt. The drain ends when the attempt's context does: when the bound
// passes (the timer cancels it), the attempt loses its race, or the
// caller cancels. Its end cancels a net/http body read and closes the
// base's body, which unblocks a body that ignores its context, so that
// neither a stalled body nor one that ignores the cancellation holds the
// operation: the timer closes it for the cuts that go through it (see
// attemptTimer.draining), and context.AfterFunc on the operation's
// context for the caller's, when that context can be canceled at all. A
// body whose Close itself blocks is beyond any bound. The response is
// closed here, on the operation's goroutine, where the telemetry its
// wrapper runs may panic; the base's body is closed once however the
// drain ended (see rawBody).
func (a *attempt) discard(resp *http.Response, bound time.Duration) {
	if resp != nil && resp.Body != nil {
		if left := a.drainLeft(bound); left > 0 {
			a.drainWithin(resp.Body, left)
		}
		resp.Body.Close()
		a.held.raw.close() // closed already, through the wrappers, unless one dropped its Close
	}
	a.release()
}

// drainLeft is how long the drain of a discarded body may take, bound
// after the answer: counted from the answer, as the pause is
// (operation.pause), so that the hooks and the telemetry that ran since
// take their part, but at least drainPause (when bound allows it), so
// that they never cost a small body its drain and its connection its
// reuse; and never past the deadline.
func (a *attempt) drainLeft(bound time.Duration) time.Duration {
	if bound <= 0 {
		return 0
	}
	left := max(a.end+bound-a.setup.clock.since(), min(drainPause, bound))
	return min(left, a.setup.clock.left())
}

// drainWithin drains body for at most left, or until the operation's
// context ends. What it arms is disarmed by defers: a body whose Read
// panics must not leave the cut armed, or a watch registered on the
// caller's context, which may live long after the operation (holding the
// attempt and the base's body until it ends).
func (a *attempt) drainWithin(body io.Reader, left time.Duration) {
	a.held.raw.discarding(a.ev.errorType())
	a.timer.draining(left, drainCutError{a.ev.errorType()})
	defer a.timer.drained()
	if op := a.setup.ctx; op.Done() != nil {
		stop := context.AfterFunc(op, a.held.raw.closeAlone)
		defer stop()
	}
	drain(body)
}

// unsent releases an attempt that will not be sent, and closes the body
// no call takes.
func (a *attempt) unsent() {
	a.release()
	if b := a.body; b != nil {
		a.body = nil // first: a Close that panics is not repeated by abandon
		b.Close()
	}
}

// lose cancels an attempt of a race that no longer needs it: another
// attempt won, or the race ended with no answer, or the hedge is being
// prepared as the race ends; as is the class its error then records. Only
// its context is canceled, which is safe while its own goroutine sends
// it; that goroutine stops its timer when it concludes.
func (a *attempt) lose(as attrs.ErrorClass) {
	a.lostAs.Store(as)
	a.timer.cancelContext()
}

// gaveUp is when the client gave up on the attempt: the bound its timer
// cut it at, where it did (its base may return a while after), else its
// end. The server got what it got of a write before then.
func (a *attempt) gaveUp() time.Duration {
	if at := time.Duration(a.timer.cutAt.Load()); at > 0 && at < a.end {
		return at
	}
	return a.end
}

// lost is the class the attempt's race canceled it as (lose), "" when it
// did not.
func (a *attempt) lost() attrs.ErrorClass {
	as, _ := a.lostAs.Load().(attrs.ErrorClass)
	return as
}

// release ends the attempt: its timer stops and its context is canceled.
// It may be called more than once.
func (a *attempt) release() {
	a.timer.stop()
	a.timer.cancelContext()
}

// abandon cleans up after a panic in the base, a hook, the telemetry or
// the transport itself: it releases the attempt, closes a request body no
// call took, and the base's response body (the one being handed over
// included), beneath any wrapper. It runs no telemetry; a body's Close
// that panics does not stop it.
func (a *attempt) abandon() {
	a.release()
	if b := a.body; b != nil {
		a.body = nil
		afterPanic(func() { b.Close() }) // the panic came before any call took it
	}
	afterPanic(a.held.raw.close)
}

// checkCopy is the copy of the write a state check gets: the prepared
// request that went on the wire, without its body (it was sent, and is
// not the hook's to read or close), with the idempotency headers under
// their canonical names, and without the attempt header and the operation
// id header otelretry stamped: they are the write's, and a lookup sent
// from the copy is an operation of its own, which stamps its own. So are
// the trace context's fields (the propagators'), under any spelling, in
// every sending mode: the lookup's client injects its own. A field that
// names an idempotency key's header is kept: the key is what the lookup
// finds the write by.
func (a *attempt) checkCopy(ctx context.Context) *http.Request {
	c := a.out.Clone(ctx)
	c.Body, c.GetBody, c.ContentLength = http.NoBody, nil, 0
	s := a.setup.sender
	s.attemptHeader.unstamp(c.Header, a.setup.caller.Header)
	a.setup.opID.unstamp(c.Header, a.setup.caller.Header)
	for _, field := range s.prop.Fields() {
		if s.namesAKey(field) {
			continue
		}
		for k := range c.Header {
			if asciiEqualFold(k, field) {
				delete(c.Header, k)
			}
		}
	}
	for _, k := range netHTTPIdempotencyKeys {
		if v, ok := c.Header[k.hidden]; ok {
			// The canonical spelling's values first, as the wire had
			// them (a write with a body goes out with both spellings).
			delete(c.Header, k.hidden)
			c.Header[k.canonical] = slices.Concat(c.Header[k.canonical], v)
		}
	}
	return c
}

// namesAKey reports whether name is a header that holds idempotency keys:
// one the options name, or the draft's two.
func (s *sender) namesAKey(name string) bool {
	return isDraftKeyHeader(name) || slices.ContainsFunc(s.keyHeaders, func(k string) bool { return asciiEqualFold(name, k) })
}

// attemptError is an attempt's error as it is reported upward, to otelhttp
// (which records its message as the client span's status and its
// ErrorType as error.type) and to the caller (inside *Error). It keeps the
// base's error for errors.Is and errors.As, but its message has every URL
// the request is known by sanitized: userinfo and query values never
// reach telemetry or an error string through a base's *url.Error.
type attemptError struct {
	err   error
	msg   string
	class attrs.ErrorClass
	// verdict is the attempt's verdict when decided is set: an attempt
	// concluded inside otelhttp's call returns it to the transport in its
	// error (see innermost).
	verdict verdict
	decided bool
}

func (e *attemptError) Error() string { return e.msg }
func (e *attemptError) Unwrap() error { return e.err }

// ErrorType is the semantic conventions' error.type (see semconv.ErrorType):
// the error class.
func (e *attemptError) ErrorType() string { return string(e.class) }

// decidedError is the error of an attempt concluded with verdict v (see
// attemptError.verdict).
func decidedError(err error, class attrs.ErrorClass, known requestText, v verdict) *attemptError {
	ae := newAttemptError(err, class, known)
	ae.verdict, ae.decided = v, true
	return ae
}

// newAttemptError wraps err with a message sanitized of the URLs the
// request is known by (the caller's, and the prepared request's, wire,
// when a PrepareAttemptFunc changed it) and of any other URL-like word in it (a
// hook's error may name a database or a proxy by URL).
func newAttemptError(err error, class attrs.ErrorClass, known requestText) *attemptError {
	return &attemptError{err: err, msg: sanitizedMessage(err, known), class: class}
}
