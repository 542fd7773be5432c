// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otelretry/otelretry-go/attrs"
)

// wire is what an attempt knows of its request on the wire: what the base
// reported through httptrace (a connection taken, headers written, each
// write of the request), and the resend guard that decides whether a
// layer below may send the prepared request again.
//
// A layer below the transport resends a request by itself when it deems
// it replayable: net/http's HTTP/1 client on a keep-alive connection that
// died, its HTTP/2 client after REFUSED_STREAM, a GOAWAY or a peer's
// PROTOCOL_ERROR (which proves nothing, golang/go#47635), quic-go's HTTP/3
// client on a rejected stream. For a request with a body each asks for a
// fresh one through GetBody, which is the attempt's getBody: it hands out
// the prepared body again (source) unless the policy guards the request
// and it may already have reached the server (resendRefused).
type wire struct {
	// trace is the attempt's ClientTrace, made the first time a layer below
	// asks for it (see clientTrace), nil until then.
	trace atomic.Pointer[httptrace.ClientTrace]

	// live: the attempt was sent, so its hooks report on its own request.
	// Before that, the only calls that could reach them are ones a
	// PrepareAttemptFunc made with the attempt's context, which are operations of
	// their own (see scopeOf).
	live atomic.Bool
	// askedLive: a layer below asked for the trace once the attempt was
	// live (see reachedTrace). probing counts the lookups of a call made
	// inside the attempt through an otelretry Transport (callerTrace),
	// which are no layer below asking; a layer's ask at the same moment
	// is missed (its refusal is then retried, as before this was known).
	askedLive atomic.Bool
	probing   atomic.Int32
	// overheard: a call made inside the attempt through an otelretry
	// Transport took a ClientTrace that carries these hooks and cannot be
	// parted from them (see callerTrace), so they may hear that call's
	// network events. From then on they gather no evidence, and the wire
	// proves nothing: neither that the request never left, nor that it
	// did not reach the server. The attempt is then bounded by the
	// operation's deadline alone (attemptTimer.leaveToDeadline): a phase
	// of the call would otherwise re-arm the attempt timeout in the middle
	// of the attempt's own upload (lenient, never a resend).
	overheard atomic.Bool

	writes  atomic.Int32
	written atomic.Bool // a write completed without error
	// streaming is the body not held in memory that the base was handed
	// last: the attempt's own, then a copy a layer below asked for to
	// resend (getBody). The cut closes it (closeStreamingAtCut).
	streaming atomic.Pointer[streamedBody]
	// copyBroke: a copy for a resend below failed as the base read it
	// (see bodyBroke).
	copyBroke atomic.Bool
	// askedConn: the base reported it was getting a connection (GetConn),
	// so it reports its phases through httptrace; connWaits: the
	// connections asked for under the attempt's context, by any call (a
	// layer's own calls with that context, before, beside or after the
	// request, included), that no GotConn answered, never below 0 (a
	// pooled HTTP/2 connection may be taken with no GetConn).
	askedConn atomic.Bool
	connWaits atomic.Int32
	// connHTTP1, connHTTP2, connReused: what GotConn said of the last
	// connection: it is known to speak HTTP/1, or HTTP/2 (see
	// protocols.speaks), and it was taken from the idle pool.
	connHTTP1, connHTTP2, connReused atomic.Bool
	// gotConn: the base took a connection for the request (GotConn), so
	// its writing may have begun; headersOut: it reported the headers
	// written (WroteHeaders); connWriteFailed: it reported a write that
	// failed writing to the connection itself (a *net.OpError), as HTTP/1
	// does when a request never left.
	gotConn, headersOut, connWriteFailed atomic.Bool
	// resendAfter is the count of writes (at least 1) at the time a lower
	// layer that had taken a connection asked for a fresh body: a resend
	// is coming, which WroteRequest may report late.
	resendAfter atomic.Int32
	// resendNext: the base showed a resend of its own (a failed write to
	// the connection, a fresh body asked for), which the next connection
	// it asks for is for; that GetConn takes it (see gettingConnection).
	resendNext atomic.Bool
	// handshakeErr is the error of a TLS handshake that failed before the
	// base got a connection (TLSHandshakeDone): net/http returns that very
	// error, so an attempt that failed with it never wrote its request,
	// whatever the error says it was doing (a read of the server's hello
	// the server reset).
	handshakeErr atomic.Pointer[error]

	// guarded: a resend below is refused once the request may have left
	// (see guardsResends); plan: how a layer below may resend it.
	guarded bool
	plan    resendPlan
	// source makes the prepared body again for a resend below: the
	// PrepareAttemptFunc's GetBody, or the caller's when the body is the caller's;
	// nil when the prepared body cannot be made again.
	source func() (io.ReadCloser, error)
	// setup is what the hooks read.
	setup wireSetup
}

// wireSetup is what the wire of one attempt is given: the timer its
// phases re-arm, where it learns and reads its host's protocol, and its
// URL.
type wireSetup struct {
	timer     *attemptTimer
	protocols *protocols
	url       *url.URL
}

// init gives the wire what its hooks read.
func (w *wire) init(s wireSetup) { w.setup = s }

// hooks makes a ClientTrace with the wire's hooks.
func (w *wire) hooks() *httptrace.ClientTrace {
	t := &httptrace.ClientTrace{GetConn: w.gettingConnection, GotConn: w.gotConnection,
		WroteHeaders: w.wroteHeaders, WroteRequest: w.wroteRequest}
	if u := w.setup.url; u == nil || u.Scheme != "http" {
		// A plain http URL makes no handshake of its own (through a
		// proxy over https, its failed handshake stays unproved): the
		// hook's closure is spared.
		t.TLSHandshakeDone = w.tlsHandshakeDone
	}
	return t
}

// clientTrace is the ClientTrace the attempt's context gives a layer below
// that asks for one (httptrace.ContextClientTrace), made on the first
// ask: a base that never asks (one answering from memory) costs the
// attempt neither the hooks nor the trace. The caller's trace
// (callerTrace of parent) is composed with the wire's as WithClientTrace
// composes them (the wire's hooks first); the context that composition
// makes is not needed beyond it, as its network hooks are the caller's,
// which parent carries already. Where the caller's trace is not parent's
// (parent derives from another attempt's context), it is composed from a
// context of its own. Two layers that ask at once may both make one; the
// first kept is the one every layer gets.
func (w *wire) clientTrace(parent context.Context, callerTrace func(context.Context) (*httptrace.ClientTrace, bool)) *httptrace.ClientTrace {
	if w.live.Load() && w.probing.Load() == 0 && !w.askedLive.Load() {
		w.askedLive.Store(true)
	}
	if t := w.trace.Load(); t != nil {
		return t
	}
	t := w.hooks()
	if caller, parents := callerTrace(parent); parents && caller != nil {
		t = httptrace.ContextClientTrace(httptrace.WithClientTrace(parent, t))
	} else if caller != nil {
		t = httptrace.ContextClientTrace(httptrace.WithClientTrace(httptrace.WithClientTrace(context.Background(), caller), t))
	}
	if w.trace.CompareAndSwap(nil, t) {
		return t
	}
	return w.trace.Load()
}

// probe looks up parent's ClientTrace for a call made inside the attempt
// through an otelretry Transport, a lookup that may reach the attempt's
// own context and is no layer below asking (see askedLive); the count is
// given back however the lookup ends (a context's Value may panic).
func (w *wire) probe(parent context.Context) *httptrace.ClientTrace {
	w.probing.Add(1)
	defer w.probing.Add(-1)
	return httptrace.ContextClientTrace(parent)
}

// reachedTrace reports whether a layer below asked the attempt's context
// for its ClientTrace once the attempt was sent, as net/http's Transport
// does first of all, under any wrapper (a call a PrepareAttemptFunc made
// with the context asked before: it tells nothing of the base): always
// false where httptrace is not answered by the context
// (answersClientTrace), whose trace is made up front.
func (w *wire) reachedTrace() bool { return answersClientTrace && w.askedLive.Load() }

// gathers reports whether the hooks gather evidence of the attempt's own
// request.
func (w *wire) gathers() bool { return !w.overheard.Load() }

// ownTrace is the ClientTrace the attempt's context gave out, nil until a
// layer below asked for one.
func (w *wire) ownTrace() *httptrace.ClientTrace { return w.trace.Load() }

// overhear notes that a call made inside the attempt took a ClientTrace
// that carries the wire's hooks (see overheard).
func (w *wire) overhear() {
	w.overheard.Store(true)
	w.setup.timer.leaveToDeadline()
}

// clientTraceKey is the key httptrace finds a context's ClientTrace by,
// which it does not export: the attempt's context answers it (see
// attemptContext), so that the trace is made only when asked for.
// answersClientTrace is false if httptrace ever looks the trace up
// otherwise than by one key; each attempt's context then carries a trace
// made with it, through WithClientTrace.
var clientTraceKey, answersClientTrace = findClientTraceKey()

// findClientTraceKey asks httptrace for the trace of a context that keeps
// the key it is asked for, and checks that WithClientTrace keeps a trace
// under that key.
func findClientTraceKey() (any, bool) {
	probe := &keyProbe{Context: context.Background()}
	httptrace.ContextClientTrace(probe)
	t := new(httptrace.ClientTrace)
	if probe.key == nil || httptrace.WithClientTrace(context.Background(), t).Value(probe.key) != t {
		return unknownTraceKey{}, false
	}
	return probe.key, true
}

// keyProbe is a context that keeps the last key it was asked for.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

// unknownTraceKey stands for clientTraceKey when it could not be found: no
// one asks for it.
type unknownTraceKey struct{}

// useURL is the URL the prepared request goes to, whose host learns its
// protocol (see gotConnection).
func (w *wire) useURL(u *url.URL) { w.setup.url = u }

// makesBodyWith sets what makes the prepared body again for a resend below
// (see getBody): nil when nothing can.
func (w *wire) makesBodyWith(source func() (io.ReadCloser, error)) { w.source = source }

// guard sets up the resend guard on the prepared request out, as
// planResends says, and makes the hooks live: from now on they report on
// the request sent.
func (w *wire) guard(out *http.Request, guarded bool, p *protocols) {
	w.guarded = guarded
	w.plan = planResends(hasBody(out), w.source != nil, guarded, p.mayGoOverHTTP2(out.URL))
	switch w.plan {
	case resendWithEvidence, resendNever:
		out.GetBody = nil
	case resendPrepared:
		out.GetBody = w.getBody
	case resendHiddenKeys:
		hideIdempotencyKeys(out.Header)
	}
	w.live.Store(true)
}

// usedNoGetBodyForEvidence reports whether the request was sent without a
// GetBody so that an HTTP/2 client names its cause (resendWithEvidence).
func (w *wire) usedNoGetBodyForEvidence() bool { return w.plan == resendWithEvidence }

// gettingConnection is httptrace's GetConn hook. For a request whose cut
// after the write could not be followed up, the attempt timeout starts
// here (see attemptBound); for the base's own resend, it starts afresh.
func (w *wire) gettingConnection(string) {
	if !w.live.Load() {
		return
	}
	ph := phaseGettingConn
	w.connWaits.Add(1)
	if w.gathers() {
		w.askedConn.Store(true)
		// Only the connection the base's resend asks for: one asked for
		// otherwise may be a side call's (see overhear), which must not
		// cut an upload in progress, the resend's included.
		if w.resendNext.CompareAndSwap(true, false) {
			ph = phaseGettingConnAgain
		}
	}
	w.setup.timer.entered(ph)
}

// gotConnection is httptrace's GotConn hook. A TLS connection tells which
// protocol its host speaks (see protocols). For a request whose cut could
// not be followed up, the attempt timeout ends here: what follows, an
// HTTP/2 stream's wait for a slot included, a cut would leave unknown
// (see attemptBound).
func (w *wire) gotConnection(info httptrace.GotConnInfo) {
	if !w.live.Load() {
		return
	}
	w.connAnswered()
	if w.gathers() {
		w.gotConn.Store(true)
		w.connReused.Store(info.Reused)
		h1, h2 := w.setup.protocols.speaks(w.setup.url, info.Conn)
		w.connHTTP1.Store(h1)
		w.connHTTP2.Store(h2)
	}
	w.setup.timer.entered(phaseGotConn)
}

// wroteHeaders is httptrace's WroteHeaders hook. A request body is written
// next, for as long as it takes, under the deadline alone (see
// attemptBound).
func (w *wire) wroteHeaders() {
	if !w.live.Load() {
		return
	}
	if w.gathers() {
		w.headersOut.Store(true)
	}
	w.setup.timer.entered(phaseHeadersOut)
}

// wroteRequest is httptrace's WroteRequest hook: one call per write of the
// request on the wire, including a resend net/http makes by itself.
func (w *wire) wroteRequest(info httptrace.WroteRequestInfo) {
	if !w.live.Load() {
		return
	}
	if !w.gathers() {
		return
	}
	w.writes.Add(1)
	switch {
	case info.Err == nil:
		w.written.Store(true)
		w.setup.timer.entered(phaseWritten)
	case failedConnWrite(info.Err):
		w.connWriteFailed.Store(true)
		w.resendNext.Store(true)
	}
}

// tlsHandshakeDone is httptrace's TLSHandshakeDone hook: a handshake that
// failed is kept (see handshakeErr).
func (w *wire) tlsHandshakeDone(_ tls.ConnectionState, err error) {
	if err == nil || !w.live.Load() || !w.gathers() {
		return
	}
	w.handshakeErr.Store(&err)
}

// failedHandshake reports whether err holds the very error of a TLS
// handshake the hooks heard fail.
func (w *wire) failedHandshake(err error) bool {
	p := w.handshakeErr.Load()
	return p != nil && errors.Is(err, *p)
}

// connAnswered takes one connection asked for off connWaits, never below
// 0.
func (w *wire) connAnswered() {
	for n := w.connWaits.Load(); n > 0; n = w.connWaits.Load() {
		if w.connWaits.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// waitsForConn reports whether a connection asked for under the
// attempt's context, by any call, was not had: a GetConn no GotConn
// answered.
func (w *wire) waitsForConn() bool { return w.connWaits.Load() > 0 }

// readFromConn reports whether err is a failed read from a connection.
func readFromConn(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "read"
}

// failedConnWrite reports whether err is a failed write to the connection
// itself. It is a function of its own so that the *net.OpError errors.As
// needs is allocated only when a write failed, not on every write.
func failedConnWrite(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "write"
}

// reachedWire reports whether the request may have reached the server, so
// that the server may have begun to act on it even before its body
// arrived: a write completed, or the headers were reported written and
// writing to the connection did not fail. (HTTP/1 reports its headers
// before it flushes them; a flush that fails is a failed write to the
// connection, and such a request never left. HTTP/2 and HTTP/3 report a
// body write cut by a stream reset after the headers left.)
func (w *wire) reachedWire() bool {
	return w.overheard.Load() || w.written.Load() || (w.headersOut.Load() && !w.connWriteFailed.Load())
}

// getBody is the prepared request's GetBody as the layers below see it. It
// notes a lower layer's request for a fresh body (a resend is coming) and
// refuses it when resendRefused says so; otherwise it makes the prepared
// body again.
func (w *wire) getBody() (io.ReadCloser, error) {
	if resendRefused(w.guarded, w.written.Load() || w.overheard.Load(), w.gotConn.Load(), w.connWriteFailed.Load()) {
		return nil, errResendRefused
	}
	if w.source == nil {
		return nil, errNoPreparedBody
	}
	body, err := w.source()
	if err == nil && body == nil {
		// net/http would read the nil body on its own goroutine and panic.
		return nil, getBodyError{errGetBodyNil}
	}
	if err == nil {
		body = w.streamed(body)
	}
	if err == nil && w.gotConn.Load() {
		// A resend of a request that went to a connection, with the body
		// it takes (a source that refuses sends nothing): WroteRequest may
		// report the first write, or this one, only after the attempt's
		// span ended, so count it now.
		w.resendAfter.Store(max(w.writes.Load(), 1))
		w.resendNext.Store(true)
	}
	return body, err
}

// writesSoFar is the attempt's count of writes on the wire so far: what
// httptrace reported, and one more than the writes when a lower layer
// asked for a fresh body to resend it.
func (w *wire) writesSoFar() int32 {
	n := w.writes.Load()
	if r := w.resendAfter.Load(); r > 0 {
		n = max(n, r+1)
	}
	return n
}

// silent reports whether the base reported nothing of the attempt through
// httptrace: no connection asked for or taken, no write (a custom base
// that reports nothing, or net/http's before its first step).
func (w *wire) silent() bool {
	return !w.askedConn.Load() && !w.gotConn.Load() && w.writes.Load() == 0 && !w.headersOut.Load()
}

// reportsWrites reports whether the base reports its writes through
// httptrace (net/http's and quic-go's do; many custom bases do not).
func (w *wire) reportsWrites() bool { return w.gotConn.Load() || w.writes.Load() > 0 }

// unsentByTrace reports whether what the base reported through httptrace
// proves the request never left, whatever cut the attempt (the attempt
// timeout, the deadline, the base's own dial or TLS handshake timeout):
//   - it was getting a connection and never got one, and wrote nothing; or
//   - on a reused HTTP/1 connection, its one write failed writing to the
//     connection and no write completed: the failure net/http calls
//     nothingWrittenError, after which it resends by itself a request
//     with a GetBody. A guarded write that may go over HTTP/2 has none
//     (see planResends), so the failure comes back here instead.
//
// A base that reports nothing proves nothing, and neither does a trace
// that err, the attempt's failure, contradicts: a read from a connection
// the trace says the request never got, unless the read was a TLS
// handshake's the trace heard fail with err itself. httptrace reports
// every call made with a context to its trace, so a call a layer below
// makes with the attempt's context through a plain client (a token fetch
// whose dial was refused) is heard as the attempt's own.
func (w *wire) unsentByTrace(err error) bool {
	if w.overheard.Load() {
		return false
	}
	if w.writes.Load() == 0 && w.askedConn.Load() && !w.gotConn.Load() {
		return !readFromConn(err) || w.failedHandshake(err)
	}
	return w.gotConn.Load() && w.connHTTP1.Load() && w.connReused.Load() &&
		w.connWriteFailed.Load() && !w.written.Load() && w.writes.Load() == 1
}

// protocolMemo remembers which protocol (ALPN) each https host negotiated,
// as net/http's GotConn reported it, so that a guarded write with a body
// to a host known to speak HTTP/1 keeps a GetBody: net/http's HTTP/1
// client then resends by itself, through the guard, a request it proved
// unwritten. Every other https host may speak HTTP/2, whose client needs
// no GetBody to name the cause of a stream it would resend
// (h2Unprocessed), which a GetBody's refusal would hide (see
// Transport.mayGoOverHTTP2). It holds at most maxProtocolHosts hosts and
// never forgets one.
type protocolMemo struct {
	hosts sync.Map // "scheme://host" -> bool (HTTP/2)
	n     atomic.Int32
}

const maxProtocolHosts = 4096

// learn records the protocol conn negotiated for u's host, if conn is a
// TLS connection, and reports it: tlsConn, and whether it is HTTP/2. The
// answer is the connection's own, reused or not: the connections to one
// host need not all speak the same protocol (a fleet behind one name, in
// the middle of a rollout), and the host's is only the latest learned.
func (m *protocolMemo) learn(u *url.URL, conn net.Conn) (tlsConn, h2 bool) {
	tc, ok := conn.(interface{ ConnectionState() tls.ConnectionState })
	if !ok || u == nil {
		return false, false
	}
	h2 = tc.ConnectionState().NegotiatedProtocol == "h2"
	key := u.Scheme + "://" + u.Host
	old, known := m.hosts.Load(key)
	switch {
	case known && old.(bool) != h2:
		m.hosts.Store(key, h2)
	case !known && m.reserve():
		if _, stored := m.hosts.LoadOrStore(key, h2); stored {
			m.n.Add(-1) // another attempt placed it first
		}
	}
	return true, h2
}

// reserve takes a place for a host, and reports whether one was left. The
// count is of hosts held, never of attempts: counted per attempt, it grew
// with every attempt to a host beyond the bound, and wrapped.
func (m *protocolMemo) reserve() bool {
	for {
		n := m.n.Load()
		if n >= maxProtocolHosts {
			return false
		}
		if m.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// knows reports what u's host is known to speak: known, and whether it is
// HTTP/2.
func (m *protocolMemo) knows(u *url.URL) (known, h2 bool) {
	v, ok := m.hosts.Load(u.Scheme + "://" + u.Host)
	return ok, ok && v.(bool)
}

// protocols is what a Transport knows of the protocols its requests go
// over: its base's configuration (known: the base is net/http's transport,
// whose configuration it reads; h2c: configured for prior-knowledge HTTP/2
// on http URLs; h1Only: for HTTP/1 alone) and what hosts negotiated.
type protocols struct {
	known, h2c, h1Only bool
	memo               protocolMemo
}

// speaks reports whether conn, which a request to u got, is known to
// speak HTTP/1 (see wire.unsentByTrace, which proves a request unsent
// only by HTTP/1's rules): a TLS connection that did not negotiate h2, or
// a connection without a TLS state of net/http's own transport not
// configured for prior-knowledge HTTP/2, which it speaks on such a
// connection whatever the URL's scheme (a dialer's TLS connection that is
// not a *tls.Conn too). Any other base may speak h2c over a connection
// without TLS (net/http's wrapped in a layer, whose configuration cannot
// be read), so nothing proves it HTTP/1 there. Likewise h2, known to
// speak HTTP/2: a *tls.Conn that negotiated h2, or a connection without
// TLS of net/http's own transport configured for prior-knowledge h2c.
func (p *protocols) speaks(u *url.URL, conn net.Conn) (h1, h2 bool) {
	netHTTPsOwn := p.known && !p.h2c // HTTP/1 on a connection without a TLS state
	if tlsConn, negotiated := p.memo.learn(u, conn); tlsConn {
		// net/http reads a TLS state from a *tls.Conn alone; over another
		// type that tells its protocol, it speaks as over no TLS.
		_, tlsState := conn.(*tls.Conn)
		return !negotiated && (tlsState || netHTTPsOwn), negotiated && tlsState
	}
	return netHTTPsOwn, p.known && p.h2c
}

// mayGoOverHTTP2 reports whether a request to u may go over HTTP/2:
// prior-knowledge h2c on an http URL, or an https URL, unless the base is
// configured for HTTP/1 alone or the host is known to have negotiated
// HTTP/1.
func (p *protocols) mayGoOverHTTP2(u *url.URL) bool {
	if u == nil {
		return false
	}
	switch u.Scheme {
	case "http":
		return p.h2c
	case "https":
		if p.h1Only {
			return false
		}
		known, h2 := p.memo.knows(u)
		return !known || h2
	}
	return false
}

// h2Unprocessed reads the proof that a request was not processed from the
// error net/http's bundled HTTP/2 client returns when it would resend a
// request with a body and has no GetBody: it names the cause only as text
// ("http2: Transport: cannot retry err [cause] after Request.Body was
// written; ..."). A GOAWAY whose last stream id is below the request's
// stream and REFUSED_STREAM prove the server did not process it (RFC 9113
// §6.8, §8.7); a peer's PROTOCOL_ERROR, which the client also resends on,
// proves nothing. This is the one place where otelretry reads an error's
// text: net/http gives no typed error here. Its messages are pinned by
// TestH2UnprocessedMessages, which fails when a Go release changes them.
//
// The message of a resend net/http would make is read only for an attempt
// sent that way (withoutGetBody: resendWithEvidence); that of a
// connection's first stream under a GOAWAY with an error code, which
// net/http resends for no request, with a body or without, is read for
// every attempt. Only an error whose whole message has net/http's shape
// counts, so that no text a server controls (a header line quoted in an
// HTTP/1 error, a GOAWAY's debug data) can pass for the proof.
func h2Unprocessed(err error, withoutGetBody bool) (Evidence, bool) {
	var e Evidence
	var ok bool
	walkErrors(err, func(err error) {
		if msg, readable := errorText(err); !ok && readable {
			e, ok = h2UnprocessedMessage(msg, withoutGetBody)
		}
	})
	return e, ok
}

// h2UnprocessedMessage reads one error message of net/http's shape.
func h2UnprocessedMessage(msg string, withoutGetBody bool) (Evidence, bool) {
	// A GOAWAY with an error code (ENHANCE_YOUR_CALM: a server shedding
	// load) ends a connection's first stream, above the frame's last
	// stream id, in a message of its own that net/http does not retry.
	if code, ok := strings.CutPrefix(msg, "http2: Transport received GOAWAY from server ErrCode:"); ok && h2CodeName(code) {
		return Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Name: "GOAWAY", noCode: true}, true
	}
	if !withoutGetBody {
		return Evidence{}, false
	}
	const prefix, suffix = "http2: Transport: cannot retry err [", "] after Request.Body was written; define Request.GetBody to avoid this error"
	cause, ok := strings.CutPrefix(msg, prefix)
	if ok {
		cause, ok = strings.CutSuffix(cause, suffix)
	}
	switch {
	case !ok:
		return Evidence{}, false
	case cause == "http2: Transport received Server's graceful shutdown GOAWAY":
		// net/http names a GOAWAY this way whatever its error code, but on
		// a connection's first stream with one (above): the frame is the
		// proof, its code unknown.
		return Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Name: "GOAWAY", noCode: true}, true
	case strings.HasPrefix(cause, "stream error: stream ID ") &&
		(strings.HasSuffix(cause, "; REFUSED_STREAM") || strings.HasSuffix(cause, "; REFUSED_STREAM; received from peer")):
		return Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 0x7, Name: "REFUSED_STREAM"}, true
	}
	return Evidence{}, false
}

// h2CodeName reports whether s is an HTTP/2 error code as net/http names
// one: its registered name ("ENHANCE_YOUR_CALM") or "unknown error code
// 0x..": text net/http writes, never the server.
func h2CodeName(s string) bool {
	if hex, ok := strings.CutPrefix(s, "unknown error code 0x"); ok {
		return hex != "" && strings.Trim(hex, "0123456789abcdef") == ""
	}
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_1") == ""
}

// netHTTPIdempotencyKeys are the header names that make net/http treat any
// method as replayable (Request.isReplayable), in the canonical form it
// looks them up by (an exact map lookup), and the spelling that hides
// each from it.
var netHTTPIdempotencyKeys = [...]struct{ canonical, hidden string }{
	{"Idempotency-Key", "idempotency-key"},
	{"X-Idempotency-Key", "x-idempotency-key"},
}

// asciiEqualFold reports whether s is t, an ASCII word, in any case, as
// net/http compares them: a rune outside ASCII that folds to t's takes
// more bytes than t's.
func asciiEqualFold(s, t string) bool { return len(s) == len(t) && strings.EqualFold(s, t) }

// isDraftKeyHeader reports whether name, in any spelling, is one of the
// draft's two idempotency key headers (netHTTPIdempotencyKeys).
func isDraftKeyHeader(name string) bool {
	for _, k := range netHTTPIdempotencyKeys {
		if asciiEqualFold(name, k.canonical) {
			return true
		}
	}
	return false
}

// hideIdempotencyKeys keeps net/http's HTTP/1 client from resending a
// guarded bodyless write by itself: with no body there is no GetBody to
// refuse, and it resends such a request after it was written when the
// request carries Idempotency-Key or X-Idempotency-Key, which it looks up
// by the canonical name only. The header moves to the lower-case name:
// the same header on the wire (names are case-insensitive, RFC 9110 §5.1,
// and HTTP/2 and HTTP/3 send them in lower case anyway), values and order
// kept. h is the attempt's own header map. Header.Get with the canonical
// name no longer finds it, so a base that reads it that way sees it only
// by ranging over the map (docs/layers.md, "Below the transport").
func hideIdempotencyKeys(h http.Header) {
	for _, k := range netHTTPIdempotencyKeys {
		if v, ok := h[k.canonical]; ok {
			delete(h, k.canonical)
			// net/http's HTTP/1 client writes the names sorted: the
			// canonical one's values came first.
			h[k.hidden] = append(v[:len(v):len(v)], h[k.hidden]...)
		}
	}
}

// streamed wraps a copy for a resend below that is not held in memory, so
// that the cut can close it as it closes the attempt's own body.
func (w *wire) streamed(body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		return body
	}
	body = streamedUnlessInMemory(body)
	if s, ok := body.(*streamedBody); ok {
		s.reportFailureTo(&w.copyBroke)
		w.streaming.Store(s)
	}
	return body
}

// bodyBroke reports whether a body not held in memory that the base was
// handed (the attempt's own, own, or any copy for a resend below, read in
// any order) failed as the base read it.
func (w *wire) bodyBroke(own *streamedBody) bool {
	return own != nil && own.failed.Load() || w.copyBroke.Load()
}

// closeStreamingAtCut closes the body the base was handed last (first, the
// attempt's own) when ctx, the attempt's, ends, and returns what stops
// that (a close begun is not waited for: a Close that blocks would hold
// RoundTrip past the deadline, as a Read did). net/http's HTTP/1 client
// waits for its Read of the request body before it returns, even once its
// context is done (golang/go#78555), and a Read of a body that stalls (an
// io.Pipe never written) ends only when the body is closed, as net/http's
// HTTP/2 client closes a body it stops writing. A body the base is done
// with was closed by it already, and the second Close does nothing. A
// panic of the body's Close goes to otel.Handle: nobody else waits for
// this goroutine.
func (w *wire) closeStreamingAtCut(ctx context.Context, own *streamedBody) (stop func() bool) {
	w.streaming.Store(own)
	return context.AfterFunc(ctx, func() {
		defer func() {
			if p := recover(); p != nil {
				handleStrayPanic("the request body's Close at the attempt's cut", p)
			}
		}()
		w.streaming.Load().Close()
	})
}
