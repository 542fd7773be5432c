// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

// Code names a kind of finding or of note. Codes are stable: scripts and
// CI jobs may match on them.
type Code string

// The finding codes, in the order the report lists them for an operation.
// A finding is a contract violation or a pattern of the diagnostic matrix;
// any finding makes the command exit 1.
const (
	// An attempt recorded both an HTTP status and an error class.
	CodeStatusAndErrorClass Code = "status-and-error-class"
	// An attempt recorded neither an HTTP status nor an error class.
	CodeNoStatusOrErrorClass Code = "no-status-or-error-class"
	// retry.remaining_ms grew from one attempt to the next.
	CodeRemainingGrows Code = "remaining-grows"
	// decision=retry with no later attempt and no terminal reason for it.
	CodeRetryWithoutNext Code = "retry-without-next"
	// Attempts of one operation carry different operation ids.
	CodeOperationIDSplit Code = "operation-id-split"
	// One operation id is carried by several operation spans.
	CodeOperationIDReused Code = "operation-id-reused"
	// A request id occurs more than once.
	CodeDuplicateRequestID Code = "duplicate-request-id"
	// One span id is delivered with differing content.
	CodeSpanIDReused Code = "span-id-reused"
	// A non-safe method was sent again after an ambiguous result with no
	// idempotency contract and no state check answering not_applied.
	CodeUnsafeResend Code = "unsafe-resend"
	// A request that may not be sent twice (a write without an
	// idempotency contract) was hedged: sent again while an attempt of it
	// was in flight.
	CodeUnsafeHedge Code = "unsafe-hedge"
	// A layer above the retry transport sent a non-idempotent operation
	// again: a repeated operation, not a retried attempt.
	CodeOuterLayerResend Code = "outer-layer-resend"
	// A URL attribute carries userinfo or an unredacted query value.
	CodeUnredactedURL Code = "unredacted-url"
	// An attempt started after the operation's deadline or with no time left.
	CodeAttemptAfterDeadline Code = "attempt-after-deadline"
	// retry.attempt values of an operation are not 1, 2, ... n.
	CodeAttemptNumbering Code = "attempt-numbering"
	// retry.attempts differs from the number of attempt spans.
	CodeAttemptCountMismatch Code = "attempt-count-mismatch"
	// Attempt or state-check spans whose operation span was lost.
	CodeMissingOperationSpan Code = "missing-operation-span"
	// A span lacks an attribute the contract requires.
	CodeMissingAttribute Code = "missing-attribute"
	// An attribute has the wrong type or a value outside its closed set.
	CodeInvalidAttribute Code = "invalid-attribute"
)

// The note codes. A note is an absence the contract allows: an attribute
// or a span this library records that another implementation of the
// contract may leave out. Notes are shown and fail the run only under
// -strict.
const (
	// A span lacks an attribute the contract does not require.
	CodeMissingOptionalAttribute Code = "missing-optional-attribute"
	// Attempts recorded without any operation span above them, none lost.
	CodeNoOperationSpan Code = "no-operation-span"
	// Read from log records, a check that needs the span tree could not be
	// made: it would be a finding, or nothing, with the spans.
	CodeNeedsSpans Code = "needs-spans"
)

type codeInfo struct {
	code  Code
	check string // what to check next, from the contract's diagnostic matrix
}

var findingInfo = []codeInfo{
	{CodeStatusAndErrorClass, "an attempt has a status when a response arrived and an error class only when none did; find where the attempt event is built and record exactly one"},
	{CodeNoStatusOrErrorClass, "find the path that ends an attempt without classifying it; every attempt must record the status it received or the class of the failure"},
	{CodeRemainingGrows, "compare the time limit, " + keyElapsedMs + " and the operation start: remaining must be deadline minus now on one monotonic clock, never wall-clock arithmetic"},
	{CodeRetryWithoutNext, "look for a terminal reason and later attempts: the backoff or the attempt limit may have eaten the time left; record deadline_exceeded or max_attempts as its own outcome"},
	{CodeOperationIDSplit, "match the incoming request and all request ids: create the operation id once at the operation boundary, before the first call, never inside the retry wrapper"},
	{CodeOperationIDReused, "an operation id names one operation: check whether it is created per operation or reused (a constant, a shared context, an outer retry loop)"},
	{CodeDuplicateRequestID, "the same span delivered twice points at exporter or pipeline retries (duplicate delivery); different spans sharing a request id mean it is not renewed per attempt"},
	{CodeSpanIDReused, "span ids must be unique within a trace: check the id generator (a fixed seed, a copied context) or whoever rewrote the spans; only the first copy was analyzed"},
	{CodeUnsafeResend, "forbid resending a write whose outcome is unknown: query the state by the operation key (check_state) or prove an idempotency contract before any new call"},
	{CodeUnsafeHedge, "never hedge a write: hedge only safe methods and requests declared repeatable (" + keyIdempotencyContract + "=true); a write's outcome is unknown while it is in flight, and a concurrent copy may apply it twice"},
	{CodeOuterLayerResend, "a retry layer above this one (go-retryablehttp, an SDK's retryer, an application loop) sent the write again: remove that layer's retries for writes, or give the request an idempotency contract (" + keyIdempotencyContract + "=true)"},
	{CodeUnredactedURL, "normalize the endpoint before recording it: userinfo becomes REDACTED:REDACTED and every query value REDACTED; check cookies, tokens and bodies too"},
	{CodeAttemptAfterDeadline, "compute remaining = deadline - now on the monotonic clock before every call and end with deadline_exceeded, without a network call, when it is <= 0"},
	{CodeAttemptNumbering, keyAttempt + " must count 1, 2, 3... within one operation (across the hops of a redirect chain, and between the operations of one id in flight together): look for lost attempt spans or a counter created inside the loop"},
	{CodeAttemptCountMismatch, "compare " + keyAttempts + " with the attempt spans: spans may be lost (sampling, export limits) or the loop miscounts its calls"},
	{CodeMissingOperationSpan, "the operation span was lost: check that it ends on every path, that it is sampled with its children, that the exporter is flushed before exit and that the attempts get the operation's context"},
	{CodeMissingAttribute, "record every attribute of the minimal attempt event (see package attrs): what is not recorded cannot be checked"},
	{CodeInvalidAttribute, "use the types and closed vocabularies of package attrs; free-form values cannot be grouped or checked"},
}

var noteInfo = []codeInfo{
	{CodeMissingOptionalAttribute, "optional in the contract; record it for fuller checks: " + keyDeadlineMs + " for attempt-after-deadline, " + keyAttempts + " for lost attempts, the URL for outer-layer-resend"},
	{CodeNoOperationSpan, "optional in the contract; an operation span records the outcome, the time limit and the attempt count, which the operation-level checks need"},
	{CodeNeedsSpans, "log records carry no span tree: read the traces of the same run (a traces file, or -jaeger) for this check"},
}

// Codes returns every finding code in report order.
func Codes() []Code { return infoCodes(findingInfo) }

// NoteCodes returns every note code in report order.
func NoteCodes() []Code { return infoCodes(noteInfo) }

func infoCodes(infos []codeInfo) []Code {
	codes := make([]Code, len(infos))
	for i, c := range infos {
		codes[i] = c.code
	}
	return codes
}

// Check returns the default "what to check next" advice for code.
func (c Code) Check() string {
	for _, infos := range [][]codeInfo{findingInfo, noteInfo} {
		for _, info := range infos {
			if info.code == c {
				return info.check
			}
		}
	}
	return ""
}

func (c Code) rank() int {
	for i, info := range findingInfo {
		if info.code == c {
			return i
		}
	}
	for i, info := range noteInfo {
		if info.code == c {
			return len(findingInfo) + i
		}
	}
	return len(findingInfo) + len(noteInfo)
}
