package inspect

import (
	"fmt"
	"math"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// role is what a span is in the retry contract, told by its attributes.
type role int

const (
	roleOther role = iota
	roleOperation
	roleAttempt
	roleStateCheck
)

func roleOf(s *model.Span) role {
	switch {
	case s.Has(keyAttempt):
		return roleAttempt
	case s.Name == attrs.StateCheckSpanName || s.Has(keyStateCheckResult):
		return roleStateCheck
	case s.Has(keyOutcome) || s.Has(keyAttempts):
		return roleOperation
	default:
		return roleOther
	}
}

// fields reads typed contract attributes from one span and notes what is
// missing or malformed on the way.
type fields struct {
	span    *model.Span
	missing []string
	invalid []string
}

func (f *fields) invalidf(format string, args ...any) {
	f.invalid = append(f.invalid, fmt.Sprintf(format, args...))
}

func (f *fields) lookup(key string, required bool) (model.Value, bool) {
	v, ok := f.span.Attr(key)
	if !ok && required {
		f.missing = append(f.missing, key)
	}
	return v, ok
}

// str returns a string attribute ("" when absent).
func (f *fields) str(key string, required bool) string {
	v, ok := f.lookup(key, required)
	if !ok {
		return ""
	}
	if v.Type != model.TypeString {
		f.invalidf("%s has type %s, want string", key, v.Type)
	} else if v.Str == "" && required {
		f.missing = append(f.missing, key)
	}
	return v.Text()
}

// int returns an integer attribute (nil when absent or not a number). An
// integral float is used but noted as a type error.
func (f *fields) int(key string, required bool) *int64 {
	v, ok := f.lookup(key, required)
	if !ok {
		return nil
	}
	switch {
	case v.Type == model.TypeInt:
		return &v.Int
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
	v, ok := f.lookup(key, false)
	if !ok {
		return false
	}
	if v.Type != model.TypeBool {
		f.invalidf("%s has type %s, want bool", key, v.Type)
		return false
	}
	return v.Bool
}

// closed checks that a present value belongs to its closed vocabulary.
func (f *fields) closed(key, value string, valid bool) {
	if value != "" && !valid {
		f.invalidf("%s %q is not in the vocabulary", key, value)
	}
}

func readOperation(s *model.Span) (Operation, fields) {
	f := fields{span: s}
	op := Operation{
		ID:                  f.str(keyOperationID, true),
		TraceID:             s.TraceID,
		SpanID:              s.SpanID,
		Method:              strings.ToUpper(f.str(keyMethod, true)),
		URL:                 sanitizeURL(f.str(keyURLFull, true)),
		ServerAddress:       f.str(keyServerAddress, true),
		RecordedAttempts:    f.int(keyAttempts, true),
		Outcome:             f.str(keyOutcome, true),
		BudgetMs:            f.int(keyBudgetMs, true),
		IdempotencyContract: f.boolean(keyIdempotencyContract),
		Start:               s.Start,
	}
	f.closed(keyOutcome, op.Outcome, attrs.Outcome(op.Outcome).Valid())
	return op, f
}

func readAttempt(s *model.Span) (Attempt, fields) {
	f := fields{span: s}
	a := Attempt{
		OperationID:   f.str(keyOperationID, true),
		RequestID:     f.str(keyRequestID, true),
		Method:        strings.ToUpper(f.str(keyMethod, true)),
		StatusCode:    f.int(keyStatusCode, false),
		ErrorClass:    f.str(keyErrorClass, false),
		ElapsedMs:     f.int(keyElapsedMs, true),
		RemainingMs:   f.int(keyRemainingMs, true),
		Decision:      f.str(keyDecision, true),
		RetryAfterMs:  f.int(keyRetryAfterMs, false),
		ResendCount:   f.int(keyResendCount, false),
		SpanID:        s.SpanID,
		Start:         s.Start,
		hasStatus:     s.Has(keyStatusCode),
		hasErrorClass: s.Has(keyErrorClass),
	}
	if n := f.int(keyAttempt, true); n != nil {
		a.Number = *n
		if a.Number < 1 {
			f.invalidf("%s is %d, want 1 or more", keyAttempt, a.Number)
		}
	}
	a.BackoffMs = f.int(keyBackoffMs, a.Decision == string(attrs.DecisionRetry))
	f.closed(keyDecision, a.Decision, attrs.Decision(a.Decision).Valid())
	f.closed(keyErrorClass, a.ErrorClass, attrs.ErrorClass(a.ErrorClass).Valid())
	return a, f
}

func readStateCheck(s *model.Span) (StateCheck, fields) {
	f := fields{span: s}
	c := StateCheck{
		OperationID: f.str(keyOperationID, true),
		Result:      f.str(keyStateCheckResult, true),
		SpanID:      s.SpanID,
		Start:       s.Start,
	}
	switch attrs.StateCheckResult(c.Result) {
	case attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown:
	default:
		f.closed(keyStateCheckResult, c.Result, false)
	}
	return c, f
}

// describeSpan names a span in findings: its role, name and, for
// attempts, its number.
func describeSpan(s *model.Span) string {
	switch roleOf(s) {
	case roleOperation:
		return fmt.Sprintf("operation span %q", s.Name)
	case roleAttempt:
		if v, ok := s.Attr(keyAttempt); ok {
			return fmt.Sprintf("attempt span %q (attempt %s)", s.Name, v.Text())
		}
		return fmt.Sprintf("attempt span %q", s.Name)
	case roleStateCheck:
		return fmt.Sprintf("state-check span %q", s.Name)
	default:
		return fmt.Sprintf("%s span %q", s.Kind, s.Name)
	}
}
