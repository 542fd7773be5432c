// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
)

// Sentinels for errors.Is. An *Error also matches context.DeadlineExceeded
// when its outcome is deadline_exceeded and context.Canceled when it is
// canceled.
var (
	// ErrOutcomeUnknown: a write may or may not have been applied (it timed
	// out or its connection broke after it was sent, or the caller gave up
	// while it was in flight). otelretry did not resend it, and refused to
	// let net/http resend it below, unless an idempotency contract made it
	// repeatable (WithIdempotencyKeys, WithIdempotentMethods), or the
	// service said it may be repeated (WithShouldRetryWrites): then it was
	// resent and no answer settled it. The *Error's message says which. A
	// layer above otelretry may still have resent it. Resolve it with a
	// state check by the operation id, never by sending the write again
	// blindly.
	ErrOutcomeUnknown = errors.New("otelretry: outcome of the write is unknown")
	// ErrMaxAttempts: every allowed attempt failed.
	ErrMaxAttempts = errors.New("otelretry: attempt limit reached")
	// ErrBudgetExhausted: the client-wide retry budget refused a retry.
	ErrBudgetExhausted = errors.New("otelretry: retry budget exhausted")
	// ErrNotReplayable: a retry was needed but the request body cannot be
	// sent twice (no GetBody).
	ErrNotReplayable = errors.New("otelretry: request body cannot be replayed")
	// ErrThrottled: the client-side throttle (WithThrottle) refused a
	// request to a dependency that is refusing or timing out: the first
	// attempt, which was never sent, or a retry.
	ErrThrottled = errors.New("otelretry: refused by the client-side throttle")
	// ErrIdempotencyKeyConflict: the request carries two different
	// idempotency keys in the contract's headers (WithIdempotencyKeyContract,
	// WithIdempotencyKeys), so no server could tell under which key it is
	// repeated. It was not sent (stop, reason key_conflict).
	ErrIdempotencyKeyConflict = errors.New("otelretry: the request carries two different idempotency keys; not sent")
)

// errNilURL rejects a request that names no URL.
var errNilURL = errors.New("otelretry: nil Request.URL")

// errNotBuilt rejects a request sent through a Transport NewTransport did
// not make (a zero value), which an http.Transport's zero value would
// have made a newcomer try.
var errNotBuilt = errors.New("otelretry: Transport not made by NewTransport (its zero value is not usable); not sent")

// errUserinfoInHost rejects a request whose URL holds a userinfo in Host,
// where no base reads one.
var errUserinfoInHost = errors.New("otelretry: Request.URL.Host holds an '@' (a userinfo belongs in URL.User); not sent")

// errQueryInHost rejects a request whose URL holds a query or fragment in
// Host, which no host holds. A '/' is sent: a client that dials a unix
// socket writes its path there (URL.Host "/var/run/docker.sock"), and its
// base's dialer ignores the address.
var errQueryInHost = errors.New("otelretry: Request.URL.Host holds a '?' or '#' (a query or fragment belongs in URL.RawQuery or Fragment); not sent")

// Error is returned by Transport.RoundTrip when the operation ended without
// a response to hand back. Its message never contains headers, bodies, URL
// userinfo or query values: URLs in a cause's message are sanitized. When
// the caller's context ended the operation with a cause
// (context.WithCancelCause, context.WithTimeoutCause), errors.Is and
// errors.As reach that cause, as they do in net/http's error.
type Error struct {
	// Outcome is the terminal reason.
	Outcome attrs.Outcome
	// Reason says why (retry.reason), for example budget or pushback for
	// budget_exhausted.
	Reason attrs.Reason
	// OperationID is the id shared by every attempt of the operation.
	OperationID string
	// Attempts is the number of network calls made: 0 when none was,
	// because the caller (its cancellation or its deadline) or the
	// operation's deadline ended the operation first, or the first
	// attempt's preparation failed (its body could not be had, or the
	// PrepareAttemptFunc failed or changed what the policy judged), or the
	// client-side throttle (WithThrottle) refused it. The retry budget
	// never holds back a first call.
	Attempts int
	// Err is the last cause: the last attempt's transport error, or nil.
	// Where something else stopped what followed it (GetBody failing on
	// the resend, the PrepareAttemptFunc, the body's buffering), both are
	// joined (errors.Join: the text then spans two lines); where no
	// attempt failed so and the caller gave up, it is the caller's
	// context error. It is kept whatever ended the operation: after an
	// attempt timeout, errors.Is(err, context.DeadlineExceeded) holds also
	// when the caller's cancel during the pause ended it (Outcome
	// canceled); Outcome and Timeout tell why the operation ended.
	Err error

	// unknownWrite marks a write whose outcome is unknown: check_state, or
	// a cancellation while the write was in flight. resentBy: what let
	// otelretry send it again while an earlier copy may have been applied
	// ("" when it did not): its idempotency contract, or the service's
	// word.
	unknownWrite bool
	resentBy     string
	// noGetBody: not_replayable because the request has no GetBody (and
	// was not buffered), which the message says how to mend.
	noGetBody bool
	// stateCheckErr is the error a state check (WithStateCheck) returned,
	// sanitized; errors.Is and errors.As reach it.
	stateCheckErr error
	// callerCause is the cause the caller gave its context
	// (context.WithCancelCause, context.WithTimeoutCause) when it ended
	// the operation and neither Err nor stateCheckErr tells it already,
	// sanitized: net/http returns that cause, and errors.Is and errors.As
	// reach it here too.
	callerCause error
	// lastTimedOut: the operation's last attempt timed out.
	lastTimedOut bool
}

// Timeout reports whether the operation ended for lack of time, by its
// outcome:
//
//	deadline_exceeded                               true
//	max_attempts, budget_exhausted                  true when the last attempt timed out
//	a write whose outcome is unknown (any outcome)  false
//	canceled, stop (prepare_failed too), any other  false
//
// An earlier attempt that timed out does not make the end a timeout: a
// read canceled by its caller in the pause after a timeout is canceled.
// Timeout makes an *Error a net.Error, so that os.IsTimeout, errors.As
// with a net.Error and the layers above that read timeouts that way
// (client-go's IsTimeout) see one.
//
// It is false for a write whose outcome is unknown even when a timeout
// made it unknown: SDK retryers resend what they see as a timeout
// (aws-sdk-go-v2's retries connection timeouts), and a write otelretry
// refused to repeat must not be repeated above it because of what it
// returned. errors.Is(err, ErrOutcomeUnknown) and
// errors.Is(err, context.DeadlineExceeded) still tell such an error.
func (e *Error) Timeout() bool {
	if e.unknownWrite {
		return false
	}
	switch e.Outcome {
	case attrs.OutcomeDeadlineExceeded:
		return true
	case attrs.OutcomeMaxAttempts, attrs.OutcomeBudgetExhausted:
		return e.lastTimedOut
	}
	return false
}

// Temporary is Timeout, as net.Error requires; the net package deprecates
// it.
func (e *Error) Temporary() bool { return e.Timeout() }

// RetryableError tells a retryer above that asks (aws-sdk-go-v2's and
// smithy-go's read it first, before their own rules) whether sending the
// operation again may help: only when otelretry ran out of attempts on an
// answer it would have retried (max_attempts), and never for a write whose
// outcome is unknown, nor when the error it ended on (Err: its last
// attempt's, in a hedged race the last to end) is a refusal of the retry
// budget or the throttle (another otelretry's, below). A response
// otelretry already judged, what the retry budget, the throttle or the
// deadline stopped, and a cancellation are final: an outer retry would
// multiply the load the budget holds back, or resend a write.
// (aws-sdk-go-v2 wraps every transport error in a connection error it
// would otherwise retry, whatever Timeout says.)
func (e *Error) RetryableError() bool {
	return e.Outcome == attrs.OutcomeMaxAttempts && !e.unknownWrite &&
		!errors.Is(e, ErrThrottled) && !errors.Is(e, ErrBudgetExhausted)
}

func (e *Error) Error() string {
	msg := "otelretry: operation " + strconv.Quote(e.OperationID) + " ended " + string(e.Outcome)
	if e.Reason != "" {
		msg += " (" + string(e.Reason) + ")"
	}
	msg += " after " + strconv.Itoa(e.Attempts) + " attempt"
	if e.Attempts != 1 {
		msg += "s"
	}
	if e.noGetBody {
		msg += "; its body cannot be sent again (no GetBody, and not buffered: build the request from a []byte, strings or bytes reader, or give it a ContentLength within WithBodyBuffer's limit)"
	}
	switch {
	case e.unknownWrite && e.resentBy != "":
		msg += "; outcome of the write unknown, resent by otelretry " + e.resentBy
	case e.unknownWrite:
		msg += "; outcome of the write unknown, not resent by otelretry"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.stateCheckErr != nil {
		msg += "; state check failed: " + e.stateCheckErr.Error()
	}
	if e.callerCause != nil {
		msg += "; the caller's cause: " + e.callerCause.Error()
	}
	return msg
}

// Unwrap returns the sentinels that describe the outcome and the cause, so
// errors.Is and errors.As see both; an ErrOutcomeUnknown in a cause that
// cannot be about this operation's write (a hook's, the caller's) is not
// this one's: errors.Is(err, ErrOutcomeUnknown) does not see it there.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 4)
	switch e.Outcome {
	case attrs.OutcomeDeadlineExceeded:
		errs = append(errs, context.DeadlineExceeded)
	case attrs.OutcomeCanceled:
		errs = append(errs, context.Canceled)
	case attrs.OutcomeMaxAttempts:
		errs = append(errs, ErrMaxAttempts)
	case attrs.OutcomeBudgetExhausted:
		errs = append(errs, ErrBudgetExhausted)
	case attrs.OutcomeThrottled:
		errs = append(errs, ErrThrottled)
	}
	if e.unknownWrite {
		errs = append(errs, ErrOutcomeUnknown)
	}
	if e.Reason == attrs.ReasonNotReplayable {
		errs = append(errs, ErrNotReplayable)
	}
	if e.Err != nil {
		if e.unknownWrite {
			errs = append(errs, e.Err)
		} else {
			// The operation knows its write's outcome (a state check said
			// not_applied, or nothing was written): an unknown outcome a
			// Transport below claimed is settled, as Results says.
			errs = append(errs, causeOfOwn{e.Err})
		}
	}
	if e.stateCheckErr != nil {
		errs = append(errs, causeOfOwn{e.stateCheckErr})
	}
	if e.callerCause != nil {
		errs = append(errs, causeOfOwn{e.callerCause})
	}
	return errs
}

// causeOfOwn is an error that cannot be about the operation's own write,
// as errors.Is and errors.As walk it: all of it, but ErrOutcomeUnknown,
// which only the operation's own Error claims. A PrepareAttemptFunc's
// error (the request was not sent), a state check's, or the caller's
// cause may carry another operation's unknown write (a token fetch
// through an otelretry Transport that lost its answer; a sibling's error
// an errgroup canceled with). A base's error is not one (it may be
// another otelretry Transport's below, about the same write), unless it
// carries the caller's cause (conclude). It has no Unwrap, so that
// errors.Is and errors.As go through Is and As alone, and the readers of
// evidence (walkErrors) not at all; holds goes inside (heldError).
type causeOfOwn struct{ err error }

func (c causeOfOwn) Error() string { return c.err.Error() }

func (c causeOfOwn) Is(target error) bool {
	return target != ErrOutcomeUnknown && errors.Is(c.err, target)
}

func (c causeOfOwn) As(target any) bool { return errors.As(c.err, target) }

// heldError is the error c holds, for holds, which looks for the
// caller's cause as the same value: there too.
func (c causeOfOwn) heldError() error { return c.err }

// errAttemptTimeout is the cause with which an attempt's context is
// canceled when the attempt timeout passes before its response headers
// arrive; errDeadlineCut, when the operation's deadline does. Each names
// what ended the attempt (see attemptCut). Each is a timeout (net.Error)
// and matches context.DeadlineExceeded, as the deadline of a
// context.WithTimeout would.
var (
	errAttemptTimeout error = attemptTimeoutError{}
	errDeadlineCut    error = deadlineCutError{}
)

type attemptTimeoutError struct{}

func (attemptTimeoutError) Error() string {
	return "otelretry: the attempt timeout ended the attempt before its response headers"
}
func (attemptTimeoutError) Timeout() bool        { return true }
func (attemptTimeoutError) Temporary() bool      { return true }
func (attemptTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }
func (attemptTimeoutError) ErrorType() string    { return string(attrs.ErrorClassTimeout) }

type deadlineCutError struct{}

func (deadlineCutError) Error() string {
	return "otelretry: the operation's deadline ended the attempt before its response headers"
}
func (deadlineCutError) Timeout() bool        { return true }
func (deadlineCutError) Temporary() bool      { return true }
func (deadlineCutError) Is(target error) bool { return target == context.DeadlineExceeded }
func (deadlineCutError) ErrorType() string    { return string(attrs.ErrorClassTimeout) }

// callerCutError is the cause of an attempt the caller ended: its context
// was canceled, or its deadline passed (err, context.Canceled or
// context.DeadlineExceeded, which errors.Is reaches).
type callerCutError struct{ err error }

func (e callerCutError) Error() string {
	if e.err == context.Canceled {
		return "otelretry: the caller canceled the attempt before its response headers"
	}
	return "otelretry: the caller's deadline ended the attempt before its response headers"
}
func (e callerCutError) Unwrap() error { return e.err }

// errResendRefused is what a lower layer (net/http's own resend of a
// request on a dead keep-alive connection) gets when it asks for a fresh
// body to send again a write that was already written and that the policy
// does not treat as repeatable. The attempt then fails instead of
// repeating the write unseen, and its outcome is unknown.
var errResendRefused = errors.New("otelretry: request already written; a resend below otelretry was refused")

// prepareError is a PrepareAttemptFunc's error.
type prepareError struct{ error }

func (e prepareError) Unwrap() error { return causeOfOwn{e.error} }

// errPrepareRetarget is the cause when a PrepareAttemptFunc changed what the
// policy was decided for: the method or the host.
var errPrepareRetarget = errors.New("otelretry: PrepareAttemptFunc changed the request's method or host (URL.Host, Host, or a request target that is not a path)")

// errPrepareUnsendable is the cause when a PrepareAttemptFunc made a field
// net/http's Transport refuses to send.
var errPrepareUnsendable = errors.New("otelretry: PrepareAttemptFunc made a header or trailer net/http's Transport refuses (a name that is no token, or a value holding a control character)")

// errPrepareSwitchesProtocols is the cause when a hedge's PrepareAttemptFunc
// made a request that asks to switch protocols: no hedge is sent.
var errPrepareSwitchesProtocols = errors.New("otelretry: PrepareAttemptFunc made a hedge that asks to switch protocols (Upgrade)")

// errPrepareContract is the cause when a PrepareAttemptFunc changed the headers of
// the idempotency-key contract after the first attempt fixed them.
var errPrepareContract = errors.New("otelretry: PrepareAttemptFunc changed the idempotency-key contract's headers between attempts")

// errPrepareKey is the cause when a PrepareAttemptFunc changed the idempotency
// key WithIdempotencyKeys set on the attempt's copy.
var errPrepareKey = errors.New("otelretry: PrepareAttemptFunc changed the generated idempotency key")

// keyConflictError names the headers that carry the different keys of a
// request that was not sent (ErrIdempotencyKeyConflict): their names, never
// their values.
type keyConflictError struct{ headers []string }

func (e keyConflictError) Error() string {
	return ErrIdempotencyKeyConflict.Error() + " (in " + strings.Join(e.headers, ", ") + ")"
}
func (e keyConflictError) Unwrap() error { return ErrIdempotencyKeyConflict }

// errGetBodyNil is a GetBody that returned neither a body nor an error,
// for a request that has a body.
var errGetBodyNil = errors.New("returned a nil body and no error")

// getBodyError wraps the caller's GetBody's error.
type getBodyError struct{ error }

func (e getBodyError) Error() string { return "otelretry: GetBody: " + e.error.Error() }
func (e getBodyError) Unwrap() error { return e.error }

// drainCutError cancels the attempt's context when a discarded body did
// not drain within its bound. Its error.type is the answer's, so that the
// client span keeps the one it had.
type drainCutError struct{ errorType string }

func (drainCutError) Error() string {
	return "otelretry: discarded response body not drained before the next attempt; connection closed"
}
func (e drainCutError) ErrorType() string { return e.errorType }

// bodyError is a response body's read (or, for a 101 Switching Protocols
// connection, write) error as the layers above see it: its message
// sanitized when it named a URL with its userinfo or query values (a
// base's *url.Error, a cancellation cause that names the request), since
// otelhttp records the message as the CLIENT span's status; and its
// error.type, which otelhttp records too, the failed answer's (its status
// code) while such an answer's body is read. It keeps the error for
// errors.Is and errors.As (newBodyError).
type bodyError struct {
	err error
	// msg replaces the error's message, errorType its error.type; each
	// empty: the error's own.
	msg, errorType string
}

func (e *bodyError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return e.err.Error()
}

func (e *bodyError) Unwrap() error { return e.err }

func (e *bodyError) ErrorType() string {
	if e.errorType != "" {
		return e.errorType
	}
	return semconv.ErrorType(e.err).Value.AsString()
}

// bodyNetError is a bodyError of an error that tells a timeout (a
// net.Error, an *os.SyscallError), which still does: a caller tells it by
// err.(net.Error).Timeout() or os.IsTimeout(err), also through a
// *url.Error that wraps it.
type bodyNetError struct {
	*bodyError
	timeout interface{ Timeout() bool }
}

func (e bodyNetError) Timeout() bool { return e.timeout.Timeout() }

// Temporary is net.Error's, deprecated there too; net.Error requires it.
func (e bodyNetError) Temporary() bool {
	t, ok := e.err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// newBodyError is err with the message msg and the error.type errorType
// (each empty: err's own): a bodyError, or a bodyNetError when err tells a
// timeout.
func newBodyError(err error, msg, errorType string) error {
	be := &bodyError{err: err, msg: msg, errorType: errorType}
	if t, ok := err.(interface{ Timeout() bool }); ok {
		return bodyNetError{be, t}
	}
	return be
}

// handedOver is a body's read error as the caller gets it: a bodyError
// that only told otelhttp's wrapper the answer's error.type (endWatch) is
// the error beneath it, so that an error sanitizing left as it is stays
// itself (see sanitizedReadError).
func handedOver(err error) error {
	switch e := err.(type) {
	case *bodyError:
		if e.msg == "" {
			return e.err
		}
	case bodyNetError:
		if e.msg == "" {
			return e.err
		}
	}
	return err
}

// sanitizedReadError is err, or err sanitized when sanitizing changes its
// message: a *url.Error stays one, its URL and its error sanitized, a
// net.Error stays one, any other error is a bodyError (newBodyError). An
// error sanitizing leaves as it is (io.ErrUnexpectedEOF, context.Canceled)
// is returned itself, so that a caller comparing it with == still
// matches; one that merely looks like it holds a userinfo
// ("deploy@bastion") is sanitized too, since the text cannot tell.
func sanitizedReadError(err error, known requestText) error {
	err = safeError(err) // a body's error may hold a typed nil too
	msg := sanitizedMessage(err, known)
	if msg == err.Error() {
		return err
	}
	if ue, ok := err.(*url.Error); ok && ue.Err != nil {
		clean := *ue
		clean.URL, clean.Err = sanitizeURLText(ue.URL, knownURLs(known.caller, known.wire)), sanitizedReadError(ue.Err, known)
		if sanitizedMessage(&clean, known) == clean.Error() {
			return &clean
		}
	}
	return newBodyError(err, msg, "")
}

// bufferReadError is why a body to buffer could not be had: a read error,
// a length that is not its ContentLength, or a read not done by the
// deadline. Nothing was sent.
type bufferReadError struct{ err error }

func (e *bufferReadError) Error() string {
	return "otelretry: reading the request body to buffer it for retries: " + e.err.Error() + "; nothing sent"
}
func (e *bufferReadError) Unwrap() error { return e.err }

// errNoPreparedBody is what a layer below gets when it asks for the
// prepared body again and the PrepareAttemptFunc replaced the body without a
// GetBody of its own: the caller's bytes are never sent in its place.
var errNoPreparedBody = errors.New("otelretry: the PrepareAttemptFunc replaced the body without a GetBody; a resend below otelretry was refused")
