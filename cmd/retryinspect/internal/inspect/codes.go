package inspect

// Code names a kind of finding. Codes are stable: scripts and CI jobs may
// match on them.
type Code string

// The finding codes, in the order the report lists them for an operation.
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
	// A non-safe method was sent again after an ambiguous result with no
	// idempotency contract and no state check answering not_applied.
	CodeUnsafeResend Code = "unsafe-resend"
	// A URL attribute carries userinfo or an unredacted query value.
	CodeUnredactedURL Code = "unredacted-url"
	// An attempt started after the operation's deadline or with no budget.
	CodeAttemptAfterDeadline Code = "attempt-after-deadline"
	// retry.attempt values of an operation are not 1, 2, ... n.
	CodeAttemptNumbering Code = "attempt-numbering"
	// retry.attempts differs from the number of attempt spans.
	CodeAttemptCountMismatch Code = "attempt-count-mismatch"
	// Attempt or state-check spans without their operation span.
	CodeMissingOperationSpan Code = "missing-operation-span"
	// A span lacks an attribute the contract requires.
	CodeMissingAttribute Code = "missing-attribute"
	// An attribute has the wrong type or a value outside its closed set.
	CodeInvalidAttribute Code = "invalid-attribute"
)

var codeInfo = []struct {
	code  Code
	check string // what to check next, from the contract's diagnostic matrix
}{
	{CodeStatusAndErrorClass, "an attempt has a status when a response arrived and an error class only when none did; find where the attempt event is built and record exactly one"},
	{CodeNoStatusOrErrorClass, "find the path that ends an attempt without classifying it; every attempt must record the status it received or the class of the failure"},
	{CodeRemainingGrows, "compare the budget, " + keyElapsedMs + " and the operation start: remaining must be deadline minus now on one monotonic clock, never wall-clock arithmetic"},
	{CodeRetryWithoutNext, "look for a terminal reason and later attempts: the backoff or the attempt limit may have eaten the budget; record deadline_exceeded or max_attempts as its own outcome"},
	{CodeOperationIDSplit, "match the incoming request and all request ids: create the operation id once at the operation boundary, before the first call, never inside the retry wrapper"},
	{CodeOperationIDReused, "an operation id names one operation: check whether it is created per operation or reused (a constant, a shared context, an outer retry loop)"},
	{CodeDuplicateRequestID, "the same span delivered twice points at exporter or pipeline retries (duplicate delivery); different spans sharing a request id mean it is not renewed per attempt"},
	{CodeUnsafeResend, "forbid resending a write whose outcome is unknown: query the state by the operation key (check_state) or prove an idempotency contract before any new call"},
	{CodeUnredactedURL, "normalize the endpoint before recording it: drop userinfo and replace every query value with REDACTED; check cookies, tokens and bodies too"},
	{CodeAttemptAfterDeadline, "compute remaining = deadline - now on the monotonic clock before every call and end with deadline_exceeded, without a network call, when it is <= 0"},
	{CodeAttemptNumbering, keyAttempt + " must count 1, 2, 3... within one operation: look for lost attempt spans or a counter created inside the loop"},
	{CodeAttemptCountMismatch, "compare " + keyAttempts + " with the attempt spans: spans may be lost (sampling, export limits) or the loop miscounts its calls"},
	{CodeMissingOperationSpan, "the operation span is absent: check that it ends on every path, that it is sampled with its children and that the exporter is flushed before exit"},
	{CodeMissingAttribute, "record every contract attribute (see package attrs): what is not recorded cannot be checked"},
	{CodeInvalidAttribute, "use the types and closed vocabularies of package attrs; free-form values cannot be grouped or checked"},
}

// Codes returns every finding code in report order.
func Codes() []Code {
	codes := make([]Code, len(codeInfo))
	for i, c := range codeInfo {
		codes[i] = c.code
	}
	return codes
}

// Check returns the default "what to check next" advice for code.
func (c Code) Check() string {
	for _, info := range codeInfo {
		if info.code == c {
			return info.check
		}
	}
	return ""
}

func (c Code) rank() int {
	for i, info := range codeInfo {
		if info.code == c {
			return i
		}
	}
	return len(codeInfo)
}
