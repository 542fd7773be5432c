// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// JSON writes r as one indented JSON document.
func JSON(w io.Writer, r *inspect.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Text writes r for people: the operations with their attempts, the
// summary, then the findings.
func Text(w io.Writer, r *inspect.Report) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw}
	p.header(r)
	for i := range r.Operations {
		p.operation(&r.Operations[i])
	}
	p.summary(&r.Summary)
	p.dependencies(r.Dependencies)
	p.notes(r.Notes)
	p.findings(r.Findings)
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

type printer struct {
	w   io.Writer
	err error
}

// printf prints; every string argument comes from the input and is
// escaped, so that no control character of an id or a value reaches the
// terminal.
func (p *printer) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Escape(s)
		}
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

func (p *printer) header(r *inspect.Report) {
	p.printf("retryinspect: %s\n", countsLine(r))
	switch {
	case len(r.Operations) > 0:
	case r.Input == inspect.InputLogs:
		p.printf("\nno operations: no %s or %s record\n", attrs.LogEventOperation, attrs.LogEventAttempt)
	default:
		p.printf("\nno operations: no span carries the retry attributes\n")
	}
}

// countsLine counts the operations, attempts and spans of r: the text
// report's first line and the HTML report's subtitle.
func countsLine(r *inspect.Report) string {
	c := r.Spans
	if r.Input == inspect.InputLogs {
		return fmt.Sprintf("%s, %s in %s (%d %s, %d %s, %d of other events; %s)",
			plural(r.Summary.Operations, "operation"), plural(r.Summary.Attempts, "attempt"), plural(c.Total, "log record"),
			c.Operation, attrs.LogEventOperation, c.Attempt, attrs.LogEventAttempt, c.Other+c.StateCheck, plural(c.Duplicates, "duplicate delivery"))
	}
	return fmt.Sprintf("%s, %s in %s (%d operation, %d attempt, %d state check, %d without retry attributes; %s)",
		plural(r.Summary.Operations, "operation"), plural(r.Summary.Attempts, "attempt"), plural(c.Total, "span"),
		c.Operation, c.Attempt, c.StateCheck, c.Other, plural(c.Duplicates, "duplicate delivery"))
}

func (p *printer) operation(op *inspect.Operation) {
	p.printf("\noperation %s\n", opTitle(op))
	p.printf("  %s\n", strings.Join(opDetails(op), "  "))
	if len(op.Attempts) == 0 && len(op.StateChecks) == 0 {
		p.printf("  no attempts\n")
		return
	}
	if p.err == nil {
		p.err = Attempts(p.w, op, "  ")
	}
}

// Attempts writes the attempt table of op as the text report prints it
// (see attemptRows), each line after indent.
func Attempts(w io.Writer, op *inspect.Operation, indent string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, cols := range attemptRows(op) {
		for i := range cols {
			cols[i] = Escape(cols[i])
		}
		if _, err := fmt.Fprintf(tw, "%s%s\n", indent, strings.Join(cols, "\t")); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// attemptRows lays out the table of an operation's attempts, header
// first, with its state checks between the attempts they separate (a
// check that starts at an attempt's instant before it, as on the
// timeline). The
// REASON column appears when an attempt records retry.reason, the HEDGE
// column when an attempt is a hedge or was hedged (see hedgeText). The
// cells are not escaped yet.
func attemptRows(op *inspect.Operation) [][]string {
	reasons := slices.ContainsFunc(op.Attempts, func(at inspect.Attempt) bool { return at.Reason != "" })
	hedges := slices.ContainsFunc(op.Attempts, func(at inspect.Attempt) bool { return hedgeText(&at) != "" })
	var rows [][]string
	row := func(cols ...string) {
		if !hedges {
			cols = slices.Delete(cols, 8, 9)
		}
		if !reasons {
			cols = slices.Delete(cols, 7, 8)
		}
		rows = append(rows, cols)
	}
	row("#", "REQUEST ID", "RESULT", "AT", "ELAPSED", "REMAINING", "DECISION", "REASON", "HEDGE", "RETRY-AFTER", "BACKOFF")
	checks := op.StateChecks
	flushChecks := func(before *time.Time) {
		for len(checks) > 0 && (before == nil || !checks[0].Start.After(*before)) {
			c := checks[0]
			checks = checks[1:]
			row("-", "state_check", dash(c.Result), offset(c.OffsetMs), "-", "-", "-", "-", "-", "-", "-")
		}
	}
	for _, at := range op.Attempts {
		flushChecks(&at.Start)
		row(number(at.Number), dash(at.RequestID), result(at), offset(at.OffsetMs),
			ms(at.ElapsedMs), ms(at.RemainingMs), dash(at.Decision), dash(at.Reason), dash(hedgeText(&at)), ms(at.RetryAfterMs), ms(at.BackoffMs))
	}
	flushChecks(nil)
	return rows
}

// hedgeText says how an attempt took part in hedging: the attempt it
// hedges ("of 1", retry.hedge.of), or, when it records none, the earlier
// attempt in flight when it started ("alongside 1"); and when its own
// hedge was sent ("hedged after 20ms", retry.hedge.sent_after_ms). It is ""
// for an attempt that did neither.
func hedgeText(at *inspect.Attempt) string {
	var parts []string
	switch {
	case at.HedgeOf != nil:
		parts = append(parts, "of "+strconv.FormatInt(*at.HedgeOf, 10))
	case at.Overlaps != nil:
		parts = append(parts, "alongside "+strconv.FormatInt(*at.Overlaps, 10))
	}
	if at.HedgedAfterMs != nil {
		parts = append(parts, "hedged after "+ms(at.HedgedAfterMs))
	}
	return strings.Join(parts, ", ")
}

func (p *printer) summary(s *inspect.Summary) {
	p.printf("\nsummary: %s, %s\n", plural(s.Operations, "operation"), plural(s.Attempts, "attempt"))
	p.printf("  decisions       %s\n", shares(s.Decisions))
	p.printf("  error classes   %s\n", shares(s.ErrorClasses))
	p.printf("  status codes    %s\n", shares(s.StatusCodes))
	p.printf("  outcomes        %s\n", shares(s.Outcomes))
	p.printf("  retry ratio     %.3f (%d of %s)\n", s.RetryRatio.Value, s.RetryRatio.Count, plural(s.RetryRatio.Total, "attempt"))
	p.printf("  deadline ratio  %.3f (%d of %s)\n", s.DeadlineRatio.Value, s.DeadlineRatio.Count, plural(s.DeadlineRatio.Total, "operation"))
}

// dependencies prints each dependency's headline, as the HTML report
// and the JSON report give it; the section is left out when there are
// no operations.
func (p *printer) dependencies(ds []inspect.Dependency) {
	if len(ds) == 0 {
		return
	}
	p.printf("\ndependencies: %d (by the service they call)\n", len(ds))
	for _, d := range ds {
		p.printf("  %s\n", d.Headline)
	}
}

// notes lists the absences the contract allows; the section is left out
// when there are none.
func (p *printer) notes(ns []inspect.Note) {
	if len(ns) == 0 {
		return
	}
	p.printf("\nnotes: %d (absences the contract allows; they fail the run only with -strict)\n", len(ns))
	p.list(ns)
}

func (p *printer) findings(fs []inspect.Finding) {
	if len(fs) == 0 {
		p.printf("\nfindings: none\n")
		return
	}
	p.printf("\nfindings: %d\n", len(fs))
	p.list(fs)
}

func (p *printer) list(fs []inspect.Finding) {
	for _, f := range fs {
		p.printf("  [%s] %s\n", string(f.Code), findingWhere(f))
		p.printf("    seen:  %s\n", f.Seen)
		p.printf("    check: %s\n", f.Check)
	}
}

// opTitle names an operation: its id, method, URL and outcome.
func opTitle(op *inspect.Operation) string {
	return fmt.Sprintf("%s  %s %s  outcome %s", orNone(op.ID), dash(op.Method), dash(op.URL), dash(op.Outcome))
}

// opDetails lists the ids, start, time limit, attempt count and marks of
// an operation.
func opDetails(op *inspect.Operation) []string {
	span := op.SpanID
	if span == "" {
		span = "- (no operation span)"
	}
	d := []string{"trace " + op.TraceID, "span " + span, "start " + timestamp(op.Start),
		"deadline " + ms(op.DeadlineMs), "attempts " + intOrDash(op.RecordedAttempts)}
	if op.IdempotencyContract {
		d = append(d, "idempotency contract")
	}
	if op.IdempotencyKey != "" {
		d = append(d, "idempotency key "+op.IdempotencyKey)
	}
	if op.Redirects != nil && *op.Redirects > 0 {
		d = append(d, fmt.Sprintf("redirect hop %d", *op.Redirects+1))
	}
	if op.Repeat != nil && *op.Repeat > 0 {
		d = append(d, fmt.Sprintf("repeat %d", *op.Repeat))
	}
	// A hedge sent is an attempt of its own that names the attempt it
	// hedges (retry.hedge.of) wherever it is read from (an attempt that
	// only overlaps another is no hedge of otelretry's); its operation
	// span's hedge_sent event, from spans only, counts one whose attempt
	// was lost.
	var sent, sentEvents int
	var refused []string
	for i := range op.Attempts {
		if op.Attempts[i].HedgeOf != nil {
			sent++
		}
	}
	for _, e := range op.HedgeEvents {
		if e.Event == attrs.EventHedgeSent {
			sentEvents++
		} else {
			refused = append(refused, dash(e.Reason))
		}
	}
	sent = max(sent, sentEvents)
	if sent > 0 {
		d = append(d, "hedges sent "+strconv.Itoa(sent))
	}
	if len(refused) > 0 {
		d = append(d, "hedges refused "+strings.Join(refused, ", "))
	}
	return d
}

// findingWhere names the operation, trace and span of a finding or note,
// and how many more like it a note counts.
func findingWhere(f inspect.Finding) string {
	where := []string{"operation " + orNone(f.OperationID)}
	if f.TraceID != "" {
		where = append(where, "trace "+f.TraceID)
	}
	if f.SpanID != "" {
		where = append(where, "span "+f.SpanID)
	}
	more := ""
	if f.Count > 1 {
		more = fmt.Sprintf(" (and %d more like it)", f.Count-1)
	}
	return strings.Join(where, ", ") + more
}

// number writes an attempt number; 0 stands for one that is not a
// positive integer (reported as invalid-attribute).
func number(n int64) string {
	if n < 1 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// Escape makes text from the input safe to print on a terminal: control
// characters (C0, DEL, C1), the Unicode line and paragraph separators
// (U+2028, U+2029), which an editor or a viewer may break a line at,
// bidirectional formatting characters, which can reorder what a line
// shows, and invalid UTF-8 are written as Go escapes, so an id or an error
// class cannot forge report lines.
func Escape(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) { // invalid UTF-8, or a rune to escape
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f',
		r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

func result(at inspect.Attempt) string {
	var parts []string
	if at.StatusCode != nil {
		parts = append(parts, "status "+strconv.FormatInt(*at.StatusCode, 10))
	}
	if at.ErrorClass != "" {
		parts = append(parts, at.ErrorClass)
	}
	if len(parts) == 0 {
		return "-"
	}
	if at.Replayed {
		return strings.Join(parts, " + ") + " (replayed)"
	}
	return strings.Join(parts, " + ")
}

func shares(ss []inspect.Share) string {
	if len(ss) == 0 {
		return "none"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%s %d (%.1f%%)", s.Value, s.Count, s.Share*100)
	}
	return strings.Join(parts, ", ")
}

func ms(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10) + "ms"
}

func offset(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+dms", *v)
}

func intOrDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// plural writes n and noun, pluralized unless n is 1.
func plural(n int, noun string) string { return inspect.Plural(n, noun) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
}
