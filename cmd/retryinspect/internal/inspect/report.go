// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Report is the result of inspecting a set of spans. It is also the
// document that -json prints.
type Report struct {
	// Input is InputLogs when the report was read from log records, whose
	// counts Spans then holds; empty for spans.
	Input      string      `json:"input,omitempty"`
	Spans      SpanCounts  `json:"spans"`
	Operations []Operation `json:"operations"`
	Summary    Summary     `json:"summary"`
	// Dependencies sums up the operations by the service they call, the
	// one with the most operations that did not return first.
	Dependencies []Dependency `json:"dependencies"`
	Notes        []Note       `json:"notes"`
	Findings     []Finding    `json:"findings"`
}

// InputLogs is Report.Input for a report read from log records.
const InputLogs = "logs"

// SpanCounts counts the input spans (or log records) by role.
type SpanCounts struct {
	Total      int `json:"total"`       // distinct spans
	Duplicates int `json:"duplicates"`  // extra deliveries of spans already counted, identical or not
	Operation  int `json:"operation"`   // operation spans
	Attempt    int `json:"attempt"`     // attempt spans
	StateCheck int `json:"state_check"` // state-check spans
	Other      int `json:"other"`       // spans without retry attributes (otelhttp, servers, ...)
}

// Operation is one logical operation: its operation span and the attempt
// and state-check spans under it. An operation whose attempts were found
// without an operation span has an empty SpanID.
type Operation struct {
	ID                  string       `json:"operation_id"`
	TraceID             string       `json:"trace_id"`
	SpanID              string       `json:"span_id,omitempty"`
	Method              string       `json:"method,omitempty"`
	URL                 string       `json:"url,omitempty"` // redacted again for display
	ServerAddress       string       `json:"server_address,omitempty"`
	Dependency          string       `json:"dependency,omitempty"` // the service it calls (see Dependency)
	Outcome             string       `json:"outcome,omitempty"`
	RecordedAttempts    *int64       `json:"recorded_attempts,omitempty"` // retry.attempts
	DeadlineMs          *int64       `json:"deadline_ms,omitempty"`       // retry.deadline_ms, or the legacy retry.budget_ms
	IdempotencyContract bool         `json:"idempotency_contract,omitempty"`
	IdempotencyKey      string       `json:"idempotency_key,omitempty"` // retry.idempotency_key.source: generated, or caller
	Redirects           *int64       `json:"redirects,omitempty"`       // retry.redirects: a later hop of a redirect chain
	Repeat              *int64       `json:"repeat,omitempty"`          // retry.operation.repeat: earlier operations under the same context
	Start               time.Time    `json:"start,omitzero"`
	End                 time.Time    `json:"end,omitzero"` // of the operation span; zero without one
	Attempts            []Attempt    `json:"attempts"`
	StateChecks         []StateCheck `json:"state_checks,omitempty"`
	HedgeEvents         []HedgeEvent `json:"hedge_events,omitempty"` // the operation span's hedge_sent and hedge_refused events
	// Panicked: a panic ended the operation (its span's panic event): it
	// has no outcome, and the attempt the panic ended no decision.
	Panicked bool `json:"panicked,omitempty"`

	ending         int    // 1 + the position in Attempts of Ending(); 0 when not computed
	dependencyFrom string // where Dependency comes from (Dependency.From)
}

// HedgeEvent is a hedge_sent or hedge_refused event of an operation span:
// a hedge sent (its number, the attempt it hedges and the delay it waited)
// or refused (the attempt it would have hedged, the delay and the reason).
type HedgeEvent struct {
	Event    string `json:"event"`             // hedge_sent or hedge_refused
	Attempt  *int64 `json:"attempt,omitempty"` // hedge_sent: the hedge's retry.attempt
	Of       *int64 `json:"of,omitempty"`      // retry.hedge.of
	DelayMs  *int64 `json:"delay_ms,omitempty"`
	Reason   string `json:"reason,omitempty"` // hedge_refused: retry.reason
	OffsetMs *int64 `json:"offset_ms,omitempty"`
}

// Refused is the admission that refused the request that ended op:
// "budget" (outcome budget_exhausted) or "throttle" (throttled), "" when
// none did. One request was refused, wherever the library recorded it: an
// attempt's decision, a call abandoned after its pause (the operation
// span's attempt_abandoned), the resend a state check asked for (the
// state_check span), or a first attempt never sent. Without an operation
// span's outcome, the decision of the attempt it ended on says it.
func (op *Operation) Refused() string {
	switch op.EndedAs() {
	case string(attrs.OutcomeBudgetExhausted):
		return "budget"
	case string(attrs.OutcomeThrottled):
		return "throttle"
	}
	return ""
}

// EndedAs is op's outcome: its operation span's, or without one the
// decision of the attempt it ended on (in a race, not always the last)
// when that decision ends an operation; "" when neither says.
func (op *Operation) EndedAs() string {
	if op.Outcome != "" {
		return op.Outcome
	}
	if i := op.Ending(); i >= 0 {
		return string(attrs.Decision(op.Attempts[i].Decision).Outcome())
	}
	return ""
}

// Ending returns the position in Attempts of the attempt whose verdict
// the operation acted on last: the last attempt that is neither
// superseded (another attempt won) nor a retry another attempt carried on
// (reason in_flight, or it ended while another attempt was in flight);
// the last attempt when all are. Without hedges it is the last attempt; in
// a hedged operation, the winner or the retry of the last round of
// attempts. It returns -1 without attempts. Only an Operation that
// Analyze returned knows which retries ended while another attempt was in
// flight; one decoded from JSON goes by their reason alone.
func (op *Operation) Ending() int {
	if op.ending > 0 && op.ending <= len(op.Attempts) {
		return op.ending - 1
	}
	return ending(op.Attempts, nil)
}

// IsHedge reports whether the attempt is a hedge: it records the attempt
// it hedges (retry.hedge.of), or it started while an earlier attempt of
// its operation was in flight.
func (at *Attempt) IsHedge() bool { return at.HedgeOf != nil || at.Overlaps != nil }

// Attempt is one network call of an operation.
type Attempt struct {
	Number       int64     `json:"attempt"` // 0 when retry.attempt is not an integer
	RequestID    string    `json:"request_id,omitempty"`
	OperationID  string    `json:"operation_id,omitempty"` // as recorded on the attempt span
	Method       string    `json:"method,omitempty"`
	StatusCode   *int64    `json:"status_code,omitempty"`
	ErrorClass   string    `json:"error_class,omitempty"`
	ElapsedMs    *int64    `json:"elapsed_ms,omitempty"`
	RemainingMs  *int64    `json:"remaining_ms,omitempty"`
	Decision     string    `json:"decision,omitempty"`
	Reason       string    `json:"reason,omitempty"` // retry.reason, shown as recorded
	RetryAfterMs *int64    `json:"retry_after_ms,omitempty"`
	BackoffMs    *int64    `json:"backoff_ms,omitempty"`
	ResendCount  *int64    `json:"resend_count,omitempty"`
	Replayed     bool      `json:"replayed,omitempty"` // retry.idempotency_key.replayed: the server's stored answer
	SpanID       string    `json:"span_id"`
	Start        time.Time `json:"start,omitzero"`
	End          time.Time `json:"end,omitzero"`
	OffsetMs     *int64    `json:"offset_ms,omitempty"` // start minus the operation start
	// Hedging: the attempt this one hedges (retry.hedge.of), how long
	// after this one's start its own hedge was sent
	// (retry.hedge.sent_after_ms), and the number of an earlier attempt
	// of the operation still in flight when this one started, whatever it
	// records.
	HedgeOf       *int64 `json:"hedge_of,omitempty"`
	HedgedAfterMs *int64 `json:"hedge_sent_after_ms,omitempty"`
	Overlaps      *int64 `json:"overlaps,omitempty"`
	// Panicked: a panic ended the attempt before its decision (a hook,
	// the base or the telemetry): it records no answer or decision.
	Panicked bool `json:"panicked,omitempty"`

	hasStatus, hasErrorClass bool        // the keys are present, whatever their values
	span                     *model.Span // the attempt span
}

// StateCheck is a state check run after an unknown write outcome.
type StateCheck struct {
	Result      string    `json:"result,omitempty"`
	Attempt     *int64    `json:"attempt,omitempty"` // the attempt it checked (retry.state_check.attempt)
	OperationID string    `json:"operation_id,omitempty"`
	SpanID      string    `json:"span_id"`
	Start       time.Time `json:"start,omitzero"`
	OffsetMs    *int64    `json:"offset_ms,omitempty"`
}

// Finding is one violation of the attempt contract or one pattern of the
// diagnostic matrix. A Note has the same fields: an absence the contract
// allows, with Count the number of spans or operations it was seen on
// (the ids are those of the first).
type Finding struct {
	Code        Code   `json:"code"`
	OperationID string `json:"operation_id,omitempty"`
	TraceID     string `json:"trace_id,omitempty"`
	SpanID      string `json:"span_id,omitempty"`
	Seen        string `json:"seen"`            // what the spans show
	Check       string `json:"check"`           // what to check next
	Count       int    `json:"count,omitempty"` // notes only: how many times it was seen

	group   *group   // for ordering; nil when no operation applies
	related []*group // other operations the finding names (the earlier one of a resend, ...)
}

// Operations returns the positions in Report.Operations of the operations
// the finding names: the one it is about first, then the others its Seen
// text names (the earlier operation of an outer-layer-resend, the other
// operation spans of a reused id, ...). It is empty when no operation
// applies. Only a Report that Analyze returned knows them; one decoded from
// JSON does not.
func (f Finding) Operations() []int {
	var out []int
	for _, g := range append([]*group{f.group}, f.related...) {
		if g != nil && g != ambiguous && !slices.Contains(out, g.index) {
			out = append(out, g.index)
		}
	}
	return out
}

// Note is an absence the contract allows; see Finding.
type Note = Finding

// Summary aggregates all operations. Decisions describe the client, error
// classes and status codes describe the failures: they are kept apart.
type Summary struct {
	Operations   int     `json:"operations"`
	Attempts     int     `json:"attempts"`
	Decisions    []Share `json:"decisions"`     // over attempts
	ErrorClasses []Share `json:"error_classes"` // over attempts
	StatusCodes  []Share `json:"status_codes"`  // over attempts
	Reasons      []Share `json:"reasons"`       // over attempts, retry.reason as recorded
	Outcomes     []Share `json:"outcomes"`      // over operations
	// AttemptsPerOperation counts the operations by their number of
	// attempt spans ("0", "1", "2", ...), in that order.
	AttemptsPerOperation []Share `json:"attempts_per_operation"`
	RetryRatio           Ratio   `json:"retry_ratio"` // attempts deciding retry / attempts
	DeadlineRatio        Ratio   `json:"deadline_ratio"`
}

// Share is the count of one value and its share of the whole.
type Share struct {
	Value string  `json:"value"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
}

// Ratio is Count out of Total, with Value = Count/Total (0 when Total is 0).
type Ratio struct {
	Count int     `json:"count"`
	Total int     `json:"total"`
	Value float64 `json:"value"`
}
