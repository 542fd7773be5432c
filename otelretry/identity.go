// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

type operationIDKey struct{}

// operationContext is what WithOperationID attaches to a context: the id,
// and a count of the operations a Transport made under it, which marks an
// operation that repeats an earlier one (attrs.RepeatKey).
type operationContext struct {
	id string
	// at is the nearest boundary above the context it was added to (see
	// boundary).
	at         *boundary
	operations atomic.Int64
	// attempts numbers the attempts of every operation made under it, so
	// that request ids stay unique when an outer layer repeats the
	// operation.
	attempts atomic.Int64
	// keys are the generated idempotency keys of its operations that did
	// not succeed, for an operation that repeats one (WithIdempotencyKeys).
	keys keyMemory
}

// WithOperationID returns a context that names the logical operation the
// request belongs to. Create it at the operation boundary (where the user
// action or job starts), before the first call, so that every attempt and
// every log line of the operation share one id. An empty id is ignored.
//
// The id is recorded as given, neither sanitized nor shortened (on spans,
// log records and the Error, and on the wire under WithOperationIDHeader
// when it is a valid header value), since it is what joins them: it must
// hold no secret. Keeping it unique is
// the caller's part: two contexts given the same id each number their
// attempts from 1, so their request ids repeat.
//
// Without it, the Transport generates an id per RoundTrip, which ties the
// attempts of that call (and the hops of its redirect chain) together, but
// not separate calls of one operation.
//
// Every operation a Transport makes under the returned context, other than
// a redirect hop, counts: the second and later ones carry
// retry.operation.repeat on their span, which shows a layer above the
// Transport (go-retryablehttp, an application loop) sending the operation
// again.
//
// A hook that makes a call of its own (a state check's lookup) names that
// call this way: the call takes the id added to the hook's context, never
// the calling operation's, which OperationIDFromContext still returns
// there.
func WithOperationID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, operationIDKey{}, &operationContext{id: id, at: boundaryOf(ctx)})
}

// OperationIDFromContext returns the id set with WithOperationID. In a
// hook's context it is the id of the hook's own operation, when one was
// set for it, which its calls do not take (see WithOperationID): a layer
// that gives its calls an id unless they have one uses
// EnsureOperationID instead.
func OperationIDFromContext(ctx context.Context) (string, bool) {
	if oc, ok := ctx.Value(operationIDKey{}).(*operationContext); ok {
		return oc.id, true
	}
	return "", false
}

// EnsureOperationID returns ctx when the calls made with it belong to an
// operation id already (WithOperationID, added since the operation
// boundary a hook's context has: a hook's calls never take their calling
// operation's id), else WithOperationID(ctx, NewOperationID()). A layer
// that may send a call more than once (an SDK's retryer, a middleware
// above the Transport) calls it once per call, at its top, so that its
// tries share one id, and with it one idempotency key
// (WithIdempotencyKeys), wherever it runs: in a hook's call too.
func EnsureOperationID(ctx context.Context) context.Context {
	if operationSince(ctx, boundaryOf(ctx)) != nil {
		return ctx
	}
	return WithOperationID(ctx, NewOperationID())
}

// operationSince is the operation context added to ctx since the boundary
// at, nil for none.
func operationSince(ctx context.Context, at *boundary) *operationContext {
	if oc, ok := ctx.Value(operationIDKey{}).(*operationContext); ok && oc.at == at {
		return oc
	}
	return nil
}

// scope is what the caller's context asks of an operation: the logical
// operation it belongs to (WithOperationID), its Intent, and where to
// report its end (WithResults): the last slot of those to report to.
type scope struct {
	oc      *operationContext
	intent  Intent
	results *resultsSlot
	// at is the nearest boundary above the call's context, nil for the
	// caller's own; a call made from inside another operation (see
	// scopeOf) has one.
	at *boundary
}

// own is the operation's own scope, as its hooks' contexts tell it.
func (sc scope) own() ownScope {
	return ownScope{intent: scopedIntent{in: sc.intent, at: sc.at}, oc: sc.oc}
}

// ownScope is an operation's own Intent and WithOperationID (nil for
// none): what the contexts its hooks are handed tell of them
// (IntentFromContext, OperationIDFromContext), never those above the
// operation's start, which a call of a hook's own did not take.
type ownScope struct {
	intent scopedIntent
	oc     *operationContext
}

// value is what a hook's context tells for key; ok is false for a key
// not of the scope.
func (s *ownScope) value(key any) (v any, ok bool) {
	switch key {
	case intentKey{}:
		if s.intent.in != (Intent{}) {
			return s.intent, true
		}
		return nil, true
	case operationIDKey{}:
		if s.oc != nil {
			return s.oc, true
		}
		return nil, true
	}
	return nil, false
}

// nested reports whether the call was made from inside another operation.
func (sc scope) nested() bool { return sc.at != nil }

// attemptKey is the context key under which an attempt's context finds
// its attempt (see attemptContext).
type attemptKey struct{}

// identity is who an operation is: its id and where it stands among the
// operations that share it.
type identity struct {
	id string // "" until first needed: see opID
	// at is the boundary above the caller's context (see scope): the next
	// hop of a redirect chain, which http.Client sends with the same
	// context, is below the same one.
	at *boundary
	// follows is the redirect chain the operation is a hop of, nil for
	// none (see chainOf): its attempts are numbered on from the chain's.
	follows *chain
	// oc is the caller's WithOperationID state: attempt numbers count on
	// across the operations made under it.
	oc        *operationContext
	redirects int // hops before this one in a redirect chain
	repeat    int // operations made before this one under the same context
	// repeatKey is where the operation counts once it ends, for those
	// without WithOperationID (see repeatCounter); counted: it has one.
	repeatKey repeatKey
	counted   bool
	// key is the operation's generated idempotency key, "" when it has
	// none; request names the write it was generated for (repeatOf), ""
	// when it cannot be told.
	key, request string
	// keyTaken: key is an earlier operation's, taken from the context's
	// memory (a repeat). keySettled: settleKey ran (once: at the end, or
	// after a panic). keyLetGo: it let the key go, the write having
	// succeeded; until answerBroke keeps it after all.
	keyTaken, keySettled, keyLetGo bool
}

// newIdentity is the identity of an operation with scope sc: the chain's it
// continues (a redirect hop, prev), else the caller's (WithOperationID),
// whose operations it counts.
func newIdentity(sc scope, prev *chain) identity {
	id := identity{at: sc.at, oc: sc.oc, follows: prev}
	switch {
	case prev != nil:
		id.id, id.redirects = prev.id, prev.redirects+1
	case sc.oc != nil:
		id.repeat = int(sc.oc.operations.Add(1) - 1)
	}
	if sc.oc != nil && id.id == "" {
		id.id = sc.oc.id
	}
	return id
}

// takeKey gives the operation its idempotency key (WithIdempotencyKeys),
// for the write of method to u (sent to host) with body (told: the body is known, see
// bodySource.bytes): the key of an earlier operation
// under the same WithOperationID that sent the same write (method, URL
// and body; see repeatOf) and did not succeed (a layer above sends it
// again: its earlier tries may have been applied), else a new one.
func (i *identity) takeKey(method string, u *url.URL, host string, body []byte, told bool) string {
	if i.oc != nil {
		if request, ok := repeatOf(method, u, host, body, told); ok {
			i.request = request
			if k, ok := i.oc.keys.take(request); ok {
				i.key, i.keyTaken = k, true
				return k
			}
		}
	}
	i.key = newIdempotencyKey()
	return i.key
}

// settleKey keeps the operation's generated key under its WithOperationID
// for a later operation that repeats it, unless it succeeded (see
// sendAgain: a 307 does not): a write sent again after a success is a new
// one. A repeat is the same body too, so a
// key kept after a refusal (a 400) is never another write's. A panic
// keeps it too when a copy may have landed (abandonOnPanic); the first
// call settles.
// toRead: the success is an answer the caller reads (answerToRead), whose
// body may yet break (answerBroke). landed: a copy of the write may have
// reached the server; a key no server saw (the operation made no call, or
// every call was proven unprocessed) is not kept: it would replace the
// key of a write beside it that may have been applied.
func (i *identity) settleKey(succeeded, toRead, landed bool) {
	if i.keySettled {
		return
	}
	i.keySettled = true
	if i.oc == nil || i.key == "" || i.request == "" {
		return
	}
	switch {
	case !succeeded && i.keyTaken:
		i.oc.keys.keepTaken(i.request, i.key) // unless a repeat beside it succeeded
		return
	case !succeeded && landed:
		i.oc.keys.keep(i.request, i.key)
		return
	case !succeeded:
		return
	}
	i.keyLetGo = toRead
	i.oc.keys.letGo(i.request, i.key, i.keyTaken) // the repeats beside it hold it: they are answered by it
	i.chainKeys(i.oc.keys.forget)                 // the chain's write succeeded: a new one follows
}

// chainKeys calls f on the keys the earlier hops of the operation's
// redirect chain kept (a 307 or 308 sends the write again), each with its
// request.
func (i *identity) chainKeys(f func(request, key string)) {
	if i.follows == nil {
		return
	}
	for _, k := range i.follows.keys {
		f(k.request, k.key)
	}
}

// answerBroke keeps the key a success let go (settleKey) when the body of
// its answer (a 2xx the caller reads, not a redirect http.Client drains)
// broke as the caller read it, before the caller closed it: the caller
// never got the answer, so the write a layer above sends again is the
// same one, and the server's store of answers by key answers it. Once:
// the caller reads a body on one goroutine, after RoundTrip returned.
func (i *identity) answerBroke() {
	if i.keyLetGo {
		i.keyLetGo = false
		i.oc.keys.restore(i.request, i.key)
		i.chainKeys(i.oc.keys.restore)
	}
}

// countRepeats records that n operations of the same request ended
// under the same parent span before this one began, k where this one
// counts once it ends (see repeatCounter).
func (i *identity) countRepeats(k repeatKey, n int) { i.repeatKey, i.repeat, i.counted = k, n, true }

// endRepeat counts the operation among the calls of its request under its
// parent span, once (at its end, or after a panic).
func (i *identity) endRepeat(c *repeatCounter) {
	if i.counted {
		i.counted = false
		c.end(i.repeatKey)
	}
}

// opID returns the operation id: the chain's or the caller's
// (WithOperationID), else one generated on first use, so that an operation
// nobody records or reports does not pay for one. Spans, log records,
// errors and state checks all read it here, so they agree.
func (i *identity) opID() string {
	if i.id == "" {
		i.id = NewOperationID()
	}
	return i.id
}

// attemptNumber is the number of attempt n of the operation: counting on
// from the earlier operations under the same WithOperationID (redirect
// hops and repeats by an outer layer alike), or from the hops before this
// one in a redirect chain, so that request ids stay unique.
func (i *identity) attemptNumber(n int) int {
	switch {
	case i.oc != nil:
		return int(i.oc.attempts.Add(1))
	case i.follows != nil:
		return int(i.follows.numbered.Add(1))
	}
	return n
}

// plannedNumber is the number of call n, which a retry planned and which
// will not be made (see abandonPlanned), the operation's last number
// being last: under a count shared with other operations, one taken now,
// so that no other attempt has it; else the one after last.
func (i *identity) plannedNumber(n, last int) int {
	if i.oc != nil || i.follows != nil {
		return i.attemptNumber(n)
	}
	return last + 1
}

// unnumber gives back number, which attemptNumber gave to an attempt that
// was never sent (a hedge refused at its preparation, or whose race was
// over before it could be sent), so that the next attempt takes it and the
// numbers keep no gap. Under WithOperationID it can only when no attempt
// took a number since, of another operation under the same id; otherwise
// the gap stays.
func (i *identity) unnumber(number int) {
	switch {
	case i.oc != nil:
		i.oc.attempts.CompareAndSwap(int64(number), int64(number-1))
	case i.follows != nil:
		i.follows.numbered.CompareAndSwap(int64(number), int64(number-1))
	}
}

// chain is what the next hop of a redirect chain takes from the hop it
// follows (see chainOf): the operation id, the operation boundary its
// context is below, the hops before it, the deadline, and the number of
// the chain's last attempt, which the hop counts on from. followed: a hop
// took it, which only one may.
type chain struct {
	id        string
	at        *boundary
	redirects int
	deadline  time.Time
	numbered  atomic.Int64
	followed  atomic.Bool
	// keys are the idempotency keys its hops kept for a repeat (see
	// settleKey), which a hop that succeeds lets go.
	keys []rememberedKey
}

// newChain is the chain an operation starts with its redirect response:
// its id (made now, so that no hop writes it later), its boundary, its
// hops, its deadline and its last attempt's number.
func newChain(i *identity, deadline time.Time, lastNumber int) *chain {
	c := &chain{id: i.opID(), at: i.at, redirects: i.redirects, deadline: deadline}
	if i.follows != nil {
		c.keys = i.follows.keys
	}
	if i.oc != nil && i.key != "" && i.request != "" {
		c.keys = append(slices.Clip(c.keys), rememberedKey{i.request, i.key})
	}
	c.numbered.Store(int64(lastNumber))
	return c
}

// scopeOf reads the operation's scope from ctx: what was added to it since
// the nearest operation boundary (see boundary). For the caller's own
// context, that is everything it carries. A call made from inside another
// operation, with a context that derives from one of its attempts (a
// PrepareAttemptFunc's request, Answer.Request for a Classifier or a Backoff, a
// base below that calls out with its request's context) or from its state
// check, is an operation of its own: it takes the id, the intent and the
// result slots the hook added to that context, none of the outer
// operation's, and is never counted as a repeat of it.
func scopeOf(ctx context.Context) scope {
	at := boundaryOf(ctx)
	return scope{oc: operationSince(ctx, at), intent: intentSince(ctx, at), results: resultsSince(ctx, at), at: at}
}

// NewOperationID returns a random operation id such as "op-1f3a9c0d5e7b2a64".
// It is not a secret and not a security token.
func NewOperationID() string {
	const digits = "0123456789abcdef"
	b := [3 + 16]byte{'o', 'p', '-'}
	v := rand.Uint64()
	for i := range 8 { // little-endian bytes, each as two hex digits
		c := byte(v >> (8 * i))
		b[3+2*i], b[4+2*i] = digits[c>>4], digits[c&0x0f]
	}
	return string(b[:])
}

// RequestID returns the id of attempt n of an operation:
// "<operationID>/attempt-<n>", the retry.request.id the attempt records.
// It is exported so that a PrepareAttemptFunc can send the same id to the
// server (an X-Request-Id header, from OperationIDFromContext and its
// attempt number), tying the server's logs to the attempt's span. That
// needs an id the caller set (WithOperationID, or EnsureOperationID at the
// boundary): a generated one is not in the request's context, and
// WithOperationIDHeader is what sends it.
func RequestID(operationID string, attempt int) string {
	return operationID + "/attempt-" + strconv.Itoa(attempt)
}

func methodOf(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

var safeMethods = attrs.SafeMethods()

// safeMethod reports whether RFC 9110 defines method as safe, and so
// idempotent without any declaration.
func safeMethod(method string) bool { return slices.Contains(safeMethods, method) }

// repeatCounter counts, per parent span and request (method and path),
// the operations a Transport ended under it, for operations without
// WithOperationID: an outer layer sends its next try once the one before
// returned, so an operation that begins while another of the same request
// is in flight under the same span is a call of its own (a fan-out of
// creates under one handler), and one of another request never repeats
// it. It only feeds a span attribute, never a decision, so it may forget:
// when it holds maxRepeatParents keys, it starts again empty, which can
// miss a repeat marker but never invents one.
type repeatCounter struct {
	mu sync.Mutex
	m  map[repeatKey]int
}

// repeatKey is where repeatCounter counts an operation: its parent span
// and its request.
type repeatKey struct {
	trace        trace.TraceID
	span         trace.SpanID
	method, path string
}

const maxRepeatParents = 4096

// ended returns how many operations of k ended before now.
func (c *repeatCounter) ended(k repeatKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// end counts an operation of k that ended.
func (c *repeatCounter) end(k repeatKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxRepeatParents {
		c.m = make(map[repeatKey]int)
	}
	c.m[k]++
}

// repeatOf is where the operation of req counts among the calls of the
// same request, and how many of them this Transport ended before it
// began: those under the span around the RoundTrip (an outer layer's
// tries under one span of the caller's, of any kind) or, under a CLIENT
// span the request carries on its headers, those under that span's
// parent: a client instrumentation above (otelhttp's Transport) starts
// and injects one such span per try, under the caller's. A caller's own
// CLIENT span around a call, which each try does not carry anew, is the
// call's span itself. The SDK's spans tell their kind and parent; a span
// that does not is taken as it is. ok is false without a parent span.
func (c *repeatCounter) repeatOf(ctx context.Context, req *http.Request, prop propagation.TextMapPropagator) (k repeatKey, n int, ok bool) {
	s := trace.SpanFromContext(ctx)
	sc := s.SpanContext()
	if !sc.IsValid() {
		return repeatKey{}, 0, false
	}
	k = repeatKey{trace: sc.TraceID(), span: sc.SpanID(), method: methodOf(req), path: req.URL.Path}
	if n := c.ended(k); n > 0 {
		return k, n, true
	}
	if kind, ok := s.(interface {
		SpanKind() trace.SpanKind
		Parent() trace.SpanContext
	}); ok && kind.SpanKind() == trace.SpanKindClient && kind.Parent().IsValid() && carries(req.Header, prop, sc) {
		k.trace, k.span = kind.Parent().TraceID(), kind.Parent().SpanID()
		return k, c.ended(k), true
	}
	return k, 0, true
}

// carries reports whether headers h carry span sc, as the Transport's
// propagator or W3C trace context read them.
func carries(h http.Header, prop propagation.TextMapPropagator, sc trace.SpanContext) bool {
	carrier := propagation.HeaderCarrier(h)
	for _, p := range []propagation.TextMapPropagator{prop, propagation.TraceContext{}} {
		if got := trace.SpanContextFromContext(p.Extract(context.Background(), carrier)); got.TraceID() == sc.TraceID() && got.SpanID() == sc.SpanID() {
			return true
		}
	}
	return false
}

// attemptID is an attempt's place: n within its operation, from 1, and
// its number, which keeps counting across redirect hops and the
// operations of one WithOperationID (retry.attempt).
type attemptID struct{ n, number int }
