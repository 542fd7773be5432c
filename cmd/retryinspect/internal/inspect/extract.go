// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// role is what a span is in the retry contract, told by its retry.*
// attributes alone, never by its name or kind: an attempt span may be the
// transport's own span or otelhttp's CLIENT span named "GET", and another
// implementation names its spans as it likes.
type role int

const (
	roleOther role = iota
	roleOperation
	roleAttempt
	roleStateCheck
)

func roleOf(s *model.Span) role {
	switch {
	// A state check a panic ended carries the operation id and the attempt
	// it checks (retry.state_check.attempt; retry.attempt in earlier
	// releases), and no result: it is no attempt.
	case s.Has(keyStateCheckResult),
		s.Name == attrs.StateCheckSpanName && s.Has(keyOperationID):
		return roleStateCheck
	case s.Has(keyAttempt):
		return roleAttempt
	case s.Has(keyOutcome) || s.Has(keyAttempts), panickedOperation(s):
		return roleOperation
	default:
		return roleOther
	}
}

// fields reads typed contract attributes from one span and notes what is
// missing (required by the contract, or only optional) or malformed.
type fields struct {
	span     *model.Span
	missing  []string // required attributes: findings
	optional []string // optional attributes: notes
	invalid  []string
}

func (f *fields) invalidf(format string, args ...any) {
	f.invalid = append(f.invalid, fmt.Sprintf(format, args...))
}

// presence says what an absent attribute is.
type presence int

const (
	optional presence = iota // absent is fine (shown as -)
	noted                    // absent is a note
	required                 // absent is a finding
)

func (f *fields) lookup(key string, p presence) (model.Value, bool) {
	v, ok := f.span.Attr(key)
	if !ok {
		f.absent(key, p)
	}
	return v, ok
}

func (f *fields) absent(key string, p presence) {
	switch p {
	case required:
		f.missing = append(f.missing, key)
	case noted:
		f.optional = append(f.optional, key)
	}
}

// str returns a string attribute as a report shows it ("" when absent):
// any URL in it sanitized, whatever the attribute, since a producer may
// leak one anywhere (a userinfo in server.address, a URL in
// peer.service). checkURLs reads the raw values, to name what leaked.
func (f *fields) str(key string, p presence) string { return redacted(f.id(key, p)) }

// id returns a string attribute as recorded ("" when absent): an id, which
// groups and joins spans, is compared as recorded (a sanitized one could
// make two read as one) and sanitized where shown (showIDs, fmtID).
func (f *fields) id(key string, p presence) string {
	v, ok := f.lookup(key, p)
	if !ok {
		return ""
	}
	if v.Type != model.TypeString {
		f.invalidf("%s has type %s, want string", key, v.Type)
	} else if v.Str == "" {
		f.absent(key, p)
	}
	return v.Text()
}

// method returns the request's method: http.request.method, or, when
// that is _OTHER (a method outside the standard set, as the semantic
// conventions record it), http.request.method_original as sent. Spans
// written before _OTHER carry the method itself, upper-cased here as they
// always were.
func (f *fields) method(p presence) string {
	m := f.str(keyMethod, p)
	if m != attrs.MethodOther {
		return strings.ToUpper(m)
	}
	if orig := f.str(keyMethodOriginal, optional); orig != "" {
		return orig
	}
	return m
}

// int returns an integer attribute (nil when absent or not a number). An
// integral float is used but noted as a type error; NaN, infinities and
// fractions are refused.
func (f *fields) int(key string, p presence) *int64 {
	v, ok := f.lookup(key, p)
	if !ok {
		return nil
	}
	switch {
	case v.Type == model.TypeInt:
		i := v.Int // not &v.Int, which would keep the whole Value
		return &i
	case v.Type == model.TypeFloat && (math.IsNaN(v.Float) || math.IsInf(v.Float, 0)):
		f.invalidf("%s is %s, want an integer", key, strconv.FormatFloat(v.Float, 'g', -1, 64))
		return nil
	case v.Type == model.TypeFloat && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
		f.invalidf("%s has type float, want int", key)
		i := int64(v.Float)
		return &i
	default:
		f.invalidf("%s has type %s, want int", key, v.Type)
		return nil
	}
}

// boolean returns a boolean attribute (false when absent).
func (f *fields) boolean(key string) bool {
	v, ok := f.lookup(key, optional)
	if !ok {
		return false
	}
	if v.Type != model.TypeBool {
		f.invalidf("%s has type %s, want bool", key, v.Type)
		return false
	}
	return v.Bool
}

// nonNegative refuses a negative count or duration.
func (f *fields) nonNegative(key string, v *int64) {
	if v != nil && *v < 0 {
		f.invalidf("%s is %d, want 0 or more", key, *v)
	}
}

// closed checks that a present value belongs to its closed vocabulary.
func (f *fields) closed(key, value string, valid bool) {
	if value != "" && !valid {
		f.invalidf("%s %s is not in the vocabulary", key, quote(value))
	}
}

// panicked reports whether a panic ended span s (the library's panic
// event): the operation has no outcome, and the attempt it ended no
// decision.
func panicked(s *model.Span) bool {
	return slices.ContainsFunc(s.Events, func(e model.Event) bool { return e.Name == attrs.EventPanic })
}

// panickedOperation reports whether s is the library's operation span a
// panic ended: its operation id, and the request it records at the
// operation's start (method and url.full), with the panic event. An
// application's own span that carries the id (and a panic of its own) is
// none.
func panickedOperation(s *model.Span) bool {
	return s.Has(keyOperationID) && s.Has(keyMethod) && s.Has(keyURLFull) && panicked(s)
}

// outcomePanicked is the outcome the report gives an operation a panic
// ended: its span records none (not one of the contract's outcomes).
const outcomePanicked = "panicked"

// unlessPanicked is p, but optional when a panic ended the span: what the
// library records at an operation's or an attempt's end is not there.
func unlessPanicked(ended bool, p presence) presence {
	if ended {
		return optional
	}
	return p
}

func readOperation(s *model.Span) (Operation, fields) {
	f := fields{span: s}
	op := Operation{
		ID:                  f.id(keyOperationID, required),
		TraceID:             s.TraceID,
		SpanID:              s.SpanID,
		Method:              f.method(noted),
		URL:                 redact.String(f.str(keyURLFull, noted)),
		ServerAddress:       f.str(keyServerAddress, noted),
		RecordedAttempts:    f.int(keyAttempts, unlessPanicked(panickedOperation(s), noted)),
		Outcome:             f.str(keyOutcome, unlessPanicked(panickedOperation(s), required)),
		Panicked:            panickedOperation(s) && !s.Has(keyOutcome),
		IdempotencyContract: f.boolean(keyIdempotencyContract),
		IdempotencyKey:      f.str(keyIdempotencyKey, optional),
		Redirects:           f.int(keyRedirects, optional),
		Repeat:              f.int(keyRepeat, optional),
		Start:               s.Start,
		End:                 s.End,
	}
	// retry.deadline_ms, or its name before v0.2.0.
	if s.Has(keyDeadlineMs) || !s.Has(keyLegacyBudgetMs) {
		op.DeadlineMs = f.int(keyDeadlineMs, unlessPanicked(op.Panicked, noted))
		f.nonNegative(keyDeadlineMs, op.DeadlineMs)
	} else {
		op.DeadlineMs = f.int(keyLegacyBudgetMs, noted)
		f.nonNegative(keyLegacyBudgetMs, op.DeadlineMs)
	}
	op.HedgeEvents = readHedgeEvents(s, &f)
	f.nonNegative(keyAttempts, op.RecordedAttempts)
	f.nonNegative(keyRedirects, op.Redirects)
	f.nonNegative(keyRepeat, op.Repeat)
	f.closed(keyOutcome, op.Outcome, attrs.Outcome(op.Outcome).Valid())
	f.closed(keyIdempotencyKey, op.IdempotencyKey, attrs.KeySource(op.IdempotencyKey).Valid())
	if !attrs.KeySource(op.IdempotencyKey).Valid() {
		op.IdempotencyKey = "" // no key is read from a value outside the set
	}
	if op.Panicked {
		op.Outcome = outcomePanicked
	}
	return op, f
}

// readHedgeEvents reads the hedge_sent and hedge_refused events of an
// operation span, in the order recorded; what is malformed in them is
// reported with the span's other attributes.
func readHedgeEvents(s *model.Span, f *fields) []HedgeEvent {
	var out []HedgeEvent
	for i := range s.Events {
		e := &s.Events[i]
		if e.Name != attrs.EventHedgeSent && e.Name != attrs.EventHedgeRefused {
			continue
		}
		ef := fields{span: &model.Span{Attributes: e.Attributes}}
		h := HedgeEvent{Event: e.Name, Of: ef.int(keyHedgeOf, optional), DelayMs: ef.int(keyHedgeDelayMs, optional)}
		if e.Name == attrs.EventHedgeSent {
			h.Attempt = ef.int(keyAttempt, optional)
		} else {
			h.Reason = ef.str(keyReason, optional)
			ef.closed(keyReason, h.Reason, attrs.Reason(h.Reason).Valid())
		}
		if !s.Start.IsZero() && !e.Time.IsZero() {
			ms := e.Time.Sub(s.Start).Milliseconds()
			h.OffsetMs = &ms
		}
		ef.nonNegative(keyHedgeDelayMs, h.DelayMs)
		for _, msg := range ef.invalid {
			f.invalidf("event %s: %s", e.Name, msg)
		}
		out = append(out, h)
	}
	return out
}

// readAttempt reads attempt span s; opPanicked says that a panic ended
// its operation, so that the attempt the panic ended (its panic event)
// lacks what an attempt records at its end, with no finding.
func readAttempt(s *model.Span, opPanicked bool) (Attempt, fields) {
	f := fields{span: s}
	ended := opPanicked && panicked(s)
	a := Attempt{
		OperationID:   f.id(keyOperationID, required),
		RequestID:     f.id(keyRequestID, required),
		Method:        f.method(unlessPanicked(ended, required)),
		StatusCode:    f.int(keyStatusCode, optional),
		ErrorClass:    f.str(keyErrorClass, optional),
		ElapsedMs:     f.int(keyElapsedMs, unlessPanicked(ended, required)),
		RemainingMs:   f.int(keyRemainingMs, unlessPanicked(ended, required)),
		Decision:      f.str(keyDecision, unlessPanicked(ended, required)),
		Panicked:      ended,
		Reason:        f.str(keyReason, optional),
		RetryAfterMs:  f.int(keyRetryAfterMs, optional),
		ResendCount:   f.int(keyResendCount, optional),
		Replayed:      f.boolean(keyReplayed),
		SpanID:        s.SpanID,
		Start:         s.Start,
		End:           s.End,
		hasStatus:     s.Has(keyStatusCode),
		hasErrorClass: s.Has(keyErrorClass),
	}
	if n := f.int(keyAttempt, required); n != nil {
		a.Number = *n
		if a.Number < 1 {
			f.invalidf("%s is %d, want 1 or more", keyAttempt, a.Number)
			a.Number = 0
		}
	}
	a.HedgeOf = f.int(keyHedgeOf, optional)
	if a.HedgeOf != nil && (*a.HedgeOf < 1 || a.Number > 0 && *a.HedgeOf >= a.Number) {
		f.invalidf("%s is %d, want the number of an earlier attempt", keyHedgeOf, *a.HedgeOf)
		a.HedgeOf = nil
	}
	a.HedgedAfterMs = f.int(keyHedgedAfterMs, optional)
	// A retry is followed by a pause, but for one another attempt in
	// flight carries out (in_flight): that attempt is the retry.
	backoff := optional
	if a.Decision == string(attrs.DecisionRetry) && a.Reason != string(attrs.ReasonInFlight) {
		backoff = noted
	}
	a.BackoffMs = f.int(keyBackoffMs, backoff)
	f.nonNegative(keyElapsedMs, a.ElapsedMs)
	f.nonNegative(keyHedgedAfterMs, a.HedgedAfterMs)
	f.nonNegative(keyBackoffMs, a.BackoffMs)
	f.nonNegative(keyRetryAfterMs, a.RetryAfterMs)
	f.nonNegative(keyResendCount, a.ResendCount)
	f.closed(keyDecision, a.Decision, attrs.Decision(a.Decision).Valid())
	f.closed(keyErrorClass, a.ErrorClass, attrs.ErrorClass(a.ErrorClass).Valid())
	f.closed(keyReason, a.Reason, attrs.Reason(a.Reason).Valid())
	return a, f
}

func readStateCheck(s *model.Span) (StateCheck, fields) {
	f := fields{span: s}
	c := StateCheck{
		OperationID: f.id(keyOperationID, required),
		Result:      f.str(keyStateCheckResult, unlessPanicked(panicked(s), required)),
		Attempt:     f.int(keyStateCheckAttempt, optional),
		SpanID:      s.SpanID,
		Start:       s.Start,
	}
	if c.Attempt != nil && *c.Attempt < 1 {
		f.invalidf("%s is %d, want 1 or more", keyStateCheckAttempt, *c.Attempt)
	}
	switch attrs.StateCheckResult(c.Result) {
	case attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown:
	default:
		f.closed(keyStateCheckResult, c.Result, false)
	}
	return c, f
}

// describeSpan names a span in findings: its role, name and, for
// attempts, its number. The name is redacted (it may hold a URL) and
// quoted.
func describeSpan(s *model.Span) string {
	if s.Log {
		return describeRecord(s)
	}
	name := quote(s.Name)
	switch roleOf(s) {
	case roleOperation:
		return "operation span " + name
	case roleAttempt:
		if v, ok := s.Attr(keyAttempt); ok && v.Type == model.TypeInt {
			return fmt.Sprintf("attempt span %s (attempt %d)", name, v.Int)
		} else if ok {
			return fmt.Sprintf("attempt span %s (attempt %s)", name, quote(v.Text()))
		}
		return "attempt span " + name
	case roleStateCheck:
		return "state-check span " + name
	default:
		return fmt.Sprintf("%s span %s", s.Kind, name)
	}
}

// describeRecord names a log record in findings: its event and, for
// attempts, their number.
func describeRecord(s *model.Span) string {
	what := quote(s.Name) + " record"
	if v, ok := s.Attr(keyAttempt); ok && roleOf(s) == roleAttempt {
		if v.Type == model.TypeInt {
			return fmt.Sprintf("%s (attempt %d)", what, v.Int)
		}
		return fmt.Sprintf("%s (attempt %s)", what, quote(v.Text()))
	}
	return what
}

// quote writes text from the input for a message: URLs in it redacted,
// then quoted, which escapes control characters, and cut when long.
func quote(s string) string {
	const maxLen = 200
	s = redact.Text(s)
	if len(s) > maxLen {
		s = strings.ToValidUTF8(s[:maxLen], "") + "..."
	}
	return strconv.Quote(s)
}

// redacted writes text from the input for a message without quotes: URLs
// in it redacted. The text renderer escapes control characters.
func redacted(s string) string { return redact.Text(s) }

// fmtID writes an id for a message, sanitized and quoted as %q does.
func fmtID(id string) string { return strconv.Quote(redacted(id)) }
