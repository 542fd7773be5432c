// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// Intent is what the caller knows about one request that the Transport
// cannot: that a POST only reads (a Prometheus query, a GraphQL query, a
// search), that this call must not be repeated, or that it needs its own
// limits. Attach it with WithIntent. The zero value changes nothing.
type Intent struct {
	// Repeatable declares the request safe to repeat whatever its method:
	// it is retried like a GET, and a timed-out write is resent instead of
	// ending check_state. Like a GET, an operation that ends without an
	// answer does not match ErrOutcomeUnknown: the mark is meant for reads
	// sent as POST (a search, a query), whose outcome needs no check. The
	// operation span of a method that is not safe records
	// retry.idempotency_contract=true, so a reader can tell the caller's
	// word from a blind resend (a GET needs no word). Deadline, attempt limit, retry budget and
	// replayability still apply.
	Repeatable bool
	// NoRetry makes the operation a single attempt (reason intent).
	NoRetry bool
	// MaxAttempts, when above 0, replaces WithMaxAttempts for this request.
	MaxAttempts int
	// Deadline, when above 0, replaces WithDeadline for this request. The
	// context's own deadline still applies when it is earlier, and so does
	// a redirect chain's, set by its first hop: a later hop cannot extend
	// it.
	Deadline time.Duration
	// AttemptTimeout, when above 0, replaces WithAttemptTimeout for this
	// request: a read that needs a longer (or a shorter) wait for its
	// answer than the Transport's other requests.
	AttemptTimeout time.Duration
	// Hedging, when not nil, replaces WithHedging for this request: a
	// read that needs hedging, or none (&Hedging{}).
	//
	// A field outside its range (a MaxAttempts, Deadline or AttemptTimeout
	// of 0 or less; a Hedging value WithHedging would ignore) keeps the
	// Transport's value, or Hedging's default, and is not reported: an
	// Intent is made per request, where a report per request would flood
	// the handler.
	Hedging *Hedging
}

type intentKey struct{}

// scopedIntent is an Intent a context carries, with the nearest boundary
// above the context it was added to (see boundary).
type scopedIntent struct {
	in Intent
	at *boundary
}

// WithIntent returns a context that carries in for the requests made with
// it. A zero Intent returns ctx unchanged. An Intent added over another
// replaces it whole, field by field unmerged: give every field you mean
// (read the outer one with IntentFromContext to extend it). A hook that makes a call of its
// own (a PrepareAttemptFunc's token fetch, a state check's lookup) gives that
// call its Intent this way: the call takes the Intent added to the hook's
// context, never the calling operation's.
func WithIntent(ctx context.Context, in Intent) context.Context {
	if in == (Intent{}) {
		return ctx
	}
	return context.WithValue(ctx, intentKey{}, scopedIntent{in: in, at: boundaryOf(ctx)})
}

// IntentFromContext returns the Intent set with WithIntent. Hooks read it
// from Answer.Request.Context(): a Classifier or Backoff can treat a
// request the caller marked Repeatable or NoRetry accordingly. There it
// is the Intent the operation runs with: a call of a hook's own is told
// its own Intent (none unless the hook gave it one), never the calling
// operation's. A layer that changes the Intent of the calls it sends
// starts from CallIntent instead, which a hook's context does not give
// the calling operation's.
func IntentFromContext(ctx context.Context) (Intent, bool) {
	in, ok := ctx.Value(intentKey{}).(scopedIntent)
	return in.in, ok
}

// CallIntent returns the Intent a call made with ctx through an otelretry
// Transport runs with: the one added with WithIntent since the nearest
// operation boundary, the zero Intent for none. It is IntentFromContext's
// but in a hook's context (an attempt's, a state check's), where the call
// a hook makes takes none of the calling operation's Intent. A layer that
// marks the reads it sends (an SDK recipe adding Repeatable, keeping what
// else its caller asked) starts from it, so that a call it sends inside a
// hook does not take the write's Intent it checks:
//
//	in := otelretry.CallIntent(ctx)
//	in.Repeatable = true
//	ctx = otelretry.WithIntent(ctx, in)
func CallIntent(ctx context.Context) Intent { return intentSince(ctx, boundaryOf(ctx)) }

// intentSince returns the Intent added to ctx since boundary at, the zero
// Intent when the one ctx carries was added above it.
func intentSince(ctx context.Context, at *boundary) Intent {
	if in, ok := ctx.Value(intentKey{}).(scopedIntent); ok && in.at == at {
		return in.in
	}
	return Intent{}
}

// Answer is what one attempt got back, as the hooks see it: a status and
// headers, or an error with its class, never both. It holds no body: the
// response's body is the caller's, read once, so a signal only the body
// carries (a 409 whose body says "try again") cannot decide a retry; a
// header or the status can.
type Answer struct {
	// Request is the attempt's copy of the request. Hooks must not modify
	// it or read its body. For a Classifier or a Backoff given with
	// WithClassifier or WithBackoff its context is the operation's, ending
	// at the operation's deadline (DeadlineExceeded) and once the hooks
	// returned: a call made with it is bounded as the operation is, is
	// sent even after a timeout cut the attempt, and is an operation of
	// its own (docs/layers.md).
	Request *http.Request
	// Attempt is the attempt's number, from 1. It keeps counting across the
	// hops of a redirect chain.
	Attempt int
	// StatusCode and Header are the response's; 0 and nil without one.
	StatusCode int
	Header     http.Header
	// Err is the transport error when no response arrived, and ErrorClass
	// its class as the library sees it.
	Err        error
	ErrorClass attrs.ErrorClass
	// RetryAfter is the server's parsed Retry-After hint, 0 without one.
	RetryAfter time.Duration
	// PreviousPause is the pause taken before this attempt (0 before the
	// first), for backoffs that grow from the last pause, such as
	// DecorrelatedJitter.
	PreviousPause time.Duration

	contentLength int64 // the response body's length, -1 when unknown
}

// Classification is a Classifier's answer. The zero value leaves the
// decision to the default rules; build the others with Retryable,
// NotRetryable and NotProcessed.
type Classification struct {
	kind     classKind
	pause    time.Duration
	evidence Evidence
}

type classKind uint8

const (
	classDefault classKind = iota
	classRetryable
	classNotRetryable
	classNotProcessed
)

// Evidence is the protocol's proof that a request was not processed: the
// protocol ("h2", "h3"), the error code and its name, recorded on the
// attempt span with the error class.
type Evidence struct {
	// Class is the error class to record: one that proves the request was
	// not processed (attrs.ErrorClass.NotProcessed); with evidence, any
	// other, or none, is recorded as ErrorClassRefusedStream.
	Class    attrs.ErrorClass
	Protocol string
	Code     uint64
	Name     string

	// noCode: the proof has no code to record (a should-retry header), or
	// does not say it (a GOAWAY as net/http's error text names it,
	// whatever code it carried), so none is recorded rather than an
	// invented 0.
	noCode bool
}

// withoutProof is c, but that a NotProcessed verdict reads as Retryable:
// worth another attempt, no proof of a write unsent.
func (c Classification) withoutProof() Classification {
	if c.kind == classNotProcessed {
		return Classification{kind: classRetryable}
	}
	return c
}

// Retryable classifies the answer as worth another attempt, after at least
// pause (0: the Backoff's; above 24 h, 24 h, the bound of a server's hint,
// which no deadline reaches in practice). A request that is not safe to repeat is still
// not resent after it may have been written: only Intent.Repeatable, a
// method declared with WithIdempotentMethods or an idempotency key (one
// WithIdempotencyKeys generated, or one under a contract) makes a write
// repeatable.
func Retryable(pause time.Duration) Classification {
	return Classification{kind: classRetryable, pause: min(max(pause, 0), maxRetryAfter)}
}

// NotRetryable classifies the answer as final: the operation stops (or,
// for a write whose outcome is unknown, ends check_state).
func NotRetryable() Classification { return Classification{kind: classNotRetryable} }

// NotProcessed classifies the answer as proof that the server never
// processed the request, which makes a resend safe even for a write (as a
// refused connection does). It applies only when the attempt got no
// response. Use it only for evidence the protocol defines (HTTP/2
// REFUSED_STREAM, HTTP/3 H3_REQUEST_REJECTED, a GOAWAY that excludes the
// stream), never on a guess.
//
// The verdict proves nothing, and reads as Retryable, for an error that
// says the write may have been applied below: one claiming
// ErrOutcomeUnknown, or another otelretry Transport's whose operation
// made attempts (its last attempt's refusal says nothing of the earlier).
//
// With protocol evidence (a Protocol, Code or Name), the attempt records
// the evidence's class and retry.evidence.*. Without any, the verdict is
// honoured as the user's word: the attempt keeps the class it observed
// (a timeout stays a timeout) and records reason classifier, with no
// retry.evidence.*.
func NotProcessed(e Evidence) Classification {
	if e.present() && !e.Class.NotProcessed() {
		// Only a class that proves the request was not processed may be
		// recorded: an empty one or any other becomes refused_stream, and
		// the metrics keep their closed set of labels.
		e.Class = attrs.ErrorClassRefusedStream
	}
	return Classification{kind: classNotProcessed, evidence: e}
}

// present reports whether e carries protocol evidence.
func (e Evidence) present() bool { return e.Protocol != "" || e.Code != 0 || e.Name != "" }

// Classifier inspects one attempt's answer and classifies it; the zero
// Classification leaves the default rules in charge. It runs before the
// decision, and the library still enforces the deadline, the attempt
// limit, the retry budget and replayability. The attempt span records
// retry.reason=classifier whenever its answer (other than the zero one)
// decided, also when the defaults would have decided the same. A
// retry it asks for costs the retry budget as any other retry does, and
// Retryable never turns an error that proves the request was not
// processed into a stop. Its time counts against the deadline, and it is
// not cut: one that blocks past the deadline holds RoundTrip until it
// returns (Answer.Request's context tells it the deadline passed), and
// its answer then gets no retry.
type Classifier func(Answer) Classification

// firstClassification asks cs in order: the first answer that is not the
// zero Classification wins.
func firstClassification(cs []Classifier) Classifier {
	return func(a Answer) Classification {
		for _, c := range cs {
			if got := c(a); got.kind != classDefault {
				return got
			}
		}
		return Classification{}
	}
}

// PrepareAttemptFunc prepares the copy of the request for attempt n before it is
// sent: re-sign it, refresh a token, set a per-attempt header. req is the
// attempt's own deep copy (Request.Clone) of the caller's request, made
// afresh for every attempt (its body from the caller's GetBody after the
// first): changing it never touches the caller's request, and a change
// made for one attempt is not seen by the next.
//
// The prepared request is the one subject of the attempt: the policy
// judges it, the wire carries it (plus the propagators' trace headers),
// and the spans, logs and errors record its sanitized URL.
//
//   - It may change headers, the URL's path and query, and the body. The
//     scheme and the userinfo are not judged: a scheme net/http has no
//     protocol for ends the operation stop, reason invalid_request, with
//     nothing sent; a userinfo is recorded redacted, and net/http's
//     Transport sends no Authorization for it (http.Client adds one only
//     from the caller's URL, above otelretry).
//   - It may not change what the policy judged: the method, the host (the
//     URL's, or Host; a request target it changes, the URL's path or
//     Opaque, which net/http sends as it is, must stay a path, "/...":
//     "//host/path" or "http://host/path" may name another host to the
//     server, and counts as a change), and, under WithIdempotencyKeyContract, the contract's headers, whose
//     values the first attempt's prepared request fixes for every later
//     one (a key set or removed on the first attempt counts; a key changed
//     later does not); nor, on any attempt, the key WithIdempotencyKeys
//     generated, which it finds set already. A change ends the operation
//     stop, reason prepare_failed, before the attempt is sent.
//   - When it replaces Body, it sets GetBody and ContentLength for the new
//     body too: a layer below (net/http's resend of a request that never
//     left) then resends exactly the prepared bytes. Without a GetBody of
//     its own, any resend below otelretry is refused. The body it replaced
//     is closed by the transport; the PrepareAttemptFunc must not close it.
//   - Unless it changes the trailers (or the body), the caller's own
//     Trailer map is sent, so that the values the caller's body sets
//     while it is read reach the wire.
//
// An error ends the operation with outcome stop, reason prepare_failed,
// and that error as the cause; no call is made. Its time counts against
// the deadline (the attempt timeout starts when the prepared attempt is
// sent): the clock is read again after it, and the request's context ends
// at the deadline. A Header set to nil is sent as no headers.
//
// A call it makes with req's context (a token fetch) through an otelretry
// Transport is an operation of its own: it honours the Intent, the
// operation id and the result slots added to that context
// (WithIntent(req.Context(), Intent{MaxAttempts: 1})), and takes none of
// the calling operation's.
type PrepareAttemptFunc func(req *http.Request, attempt int) error

// StateCheck describes a write whose outcome is unknown.
type StateCheck struct {
	// OperationID is the operation's id: the key to look the write up by.
	OperationID string
	// Request is a copy of the write. Its body was already sent and is not
	// readable; use method, URL and headers (for example an Idempotency-Key)
	// to find the record. The attempt and operation id headers otelretry
	// stamped on the write (WithAttemptHeader, WithOperationIDHeader) are
	// left out: a lookup sent from it stamps its own; a header of that name
	// the caller set, which otelretry never stamps over, stays. So are the
	// trace context's fields (those WithPropagators' propagators name in
	// their Fields, as the OpenTelemetry propagator API requires of them: a
	// field a propagator injects without naming it stays): the lookup's
	// client injects its own. A header a propagator names is left out
	// whatever it is, but a header that holds the write's idempotency key:
	// that one is kept, as the lookup may need it.
	Request *http.Request
	// Attempt is the number of the attempt whose outcome is unknown.
	Attempt int
	// Err is that attempt's error (a timeout or a broken connection).
	Err error
}

// StateResult is the answer of a state check (WithStateCheck).
type StateResult struct {
	// State says whether the write was applied.
	State attrs.StateCheckResult
	// Response is the stored result of the write. It is required when
	// State is attrs.StateApplied and is then returned to the caller as the
	// operation's response; it is ignored otherwise. A lookup's response
	// made with the hook's context stays readable after the hook returns,
	// until the operation's deadline (the context's): closing its body
	// releases that context.
	Response *http.Response
}

// stateCheckFunc is WithStateCheck's hook.
type stateCheckFunc func(ctx context.Context, check StateCheck) (StateResult, error)
