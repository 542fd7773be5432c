// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// maxRetryAfter bounds a parsed Retry-After hint. Larger hints are clamped,
// which changes nothing in practice: every pause is also capped by the
// operation deadline.
const maxRetryAfter = 24 * time.Hour

// errInvalidRetryAfter is wrapped by the error parseRetryAfter returns for a
// value that is neither delay-seconds nor an HTTP-date.
var errInvalidRetryAfter = errors.New("otelretry: invalid Retry-After")

// hintError is why a hint header's value could not be read: the header
// ("" from parseRetryAfter) and what was wrong with the value, never the
// value itself, which may carry anything (a URL with its credentials), so
// that neither the telemetry nor a caller that logs the error repeats it.
type hintError struct {
	header  string
	problem attrs.HintProblem
}

func (e *hintError) Error() string {
	msg := errInvalidRetryAfter.Error()
	if e.header != "" {
		msg = "otelretry: invalid retry hint " + e.header
	}
	return msg + ": " + string(e.problem)
}

func (e *hintError) Unwrap() error { return errInvalidRetryAfter }

// parseRetryAfter parses a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds, a non-negative decimal integer, or an HTTP-date, read
// relative to now. A date in the past yields 0. The result is at most 24
// hours. A malformed value returns an error, which says what was wrong
// with it (empty, negative, a fraction, not a date), never the value; the
// transport then ignores the hint and records that it did
// (retry_after_invalid). A service's own hint in the same two forms (a
// RateLimit-Reset) is read the same way under WithRetryHint's HintSeconds.
func parseRetryAfter(value string, now time.Time) (time.Duration, error) {
	if isDigits(value) {
		secs, err := strconv.ParseUint(value, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			// Only overflow can fail here: the value is all digits.
			return maxRetryAfter, nil
		}
		return time.Duration(secs) * time.Second, nil
	}
	date, ok := parseHTTPDate(value)
	if !ok {
		return 0, &hintError{problem: hintProblem(value, attrs.HintProblemNotADate)}
	}
	return min(max(date.Sub(now), 0), maxRetryAfter), nil
}

// httpDateLayouts are the HTTP-date's three forms (RFC 9110 §5.6.7): the
// IMF-fixdate, and the obsolete RFC 850 form (in GMT, as the grammar
// writes it: time.RFC850 takes any zone) and asctime form (its day padded
// with a blank or a zero).
var httpDateLayouts = [...]string{http.TimeFormat, "Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006", "Mon Jan 02 15:04:05 2006"}

// parseHTTPDate reads value as an HTTP-date written as its grammar writes
// it: time.Parse alone takes more (a fraction of a second, a one-digit
// hour, a day name in any case), which would read a malformed hint as
// one. The grammar's leap second, 23:59:60, which time.Parse refuses, is
// read as the instant after 23:59:59.
func parseHTTPDate(value string) (time.Time, bool) {
	var leap time.Duration
	if before, after, ok := strings.Cut(value, " 23:59:60"); ok {
		value, leap = before+" 23:59:59"+after, time.Second
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, value); err == nil && t.Format(layout) == value {
			return t.Add(leap), true
		}
	}
	return time.Time{}, false
}

// isDecimal reports whether s is a decimal number with no sign: digits,
// with an optional fraction.
func isDecimal(s string) bool {
	whole, frac, hasFrac := strings.Cut(s, ".")
	return isDigits(whole) && (!hasFrac || isDigits(frac))
}

// hintProblem says what is wrong with value, which its unit could not
// read: empty, a number with a minus sign, a number with a fraction (the
// unit takes whole numbers), else otherwise, the unit's word for anything
// else.
func hintProblem(value string, otherwise attrs.HintProblem) attrs.HintProblem {
	num, negative := strings.CutPrefix(value, "-")
	switch {
	case value == "":
		return attrs.HintProblemEmpty
	case isDecimal(num) && negative:
		return attrs.HintProblemNegative
	case isDecimal(num):
		return attrs.HintProblemFraction
	}
	return otherwise
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// HintUnit is the unit a retry hint header is written in.
type HintUnit uint8

const (
	// HintSeconds: delay-seconds or an HTTP-date, as Retry-After is
	// written (RFC 9110): a date in the past is 0, and the hint is at most
	// 24 hours.
	HintSeconds HintUnit = iota
	// HintMilliseconds: a non-negative number of milliseconds, read as
	// openai-go reads retry-after-ms (strconv.ParseFloat: 0, a fraction, a
	// + sign and an exponent are hints; a negative, NaN or an infinity is
	// none, and the next header is read).
	HintMilliseconds
	// HintWholeMilliseconds: a whole number of milliseconds above 0, as
	// azcore reads retry-after-ms and x-ms-retry-after-ms: 0, a fraction, a
	// negative or any other value is no hint, and the next header is read.
	HintWholeMilliseconds
)

// hintHeader is a response header that carries the server's hint of how
// long to wait before a retry (its canonical name), and its unit.
type hintHeader struct {
	name string
	unit HintUnit
}

// defaultRetryHints are the hint headers read when no other is configured
// (WithRetryHint says which and why). The milliseconds are read as
// openai-go reads them (HintMilliseconds: 0 and fractions are hints);
// azcore reads them as HintWholeMilliseconds, which WithRetryHint sets for
// a service whose SDK does (docs/sdk-recipes.md). Each call returns a new
// slice.
func defaultRetryHints() []hintHeader {
	return []hintHeader{
		{name: "Retry-After-Ms", unit: HintMilliseconds},
		{name: "X-Ms-Retry-After-Ms", unit: HintMilliseconds},
		{name: "Retry-After", unit: HintSeconds},
	}
}

// retryHint is the server's hint in h: the first of hints that is present
// and well-formed, read relative to now, at most maxRetryAfter. A malformed
// one is skipped (the next one present may still be the hint), and the
// first one's header and problem are returned with whatever hint was
// found, so that they can be recorded. A hint of 0 is a hint: the server
// asks for no wait. A header present with an empty value is malformed
// (empty), not absent. The value is read without the spaces and tabs
// around it (RFC 9110 §5.5), which net/http's HTTP/1 reader drops and its
// HTTP/2 client keeps.
func retryHint(h http.Header, hints []hintHeader, now time.Time) (d time.Duration, ok bool, malformed *hintError) {
	for _, hint := range hints {
		v := h[hint.name] // the names are canonical: no canonicalizing per answer
		if len(v) == 0 {
			continue
		}
		value := strings.Trim(v[0], " \t")
		var err error
		switch hint.unit {
		case HintMilliseconds:
			d, err = parseRetryAfterMs(value)
		case HintWholeMilliseconds:
			d, err = parseWholeMs(value)
		default:
			d, err = parseRetryAfter(value, now)
		}
		if err == nil {
			return d, true, malformed
		}
		if he := (*hintError)(nil); malformed == nil && errors.As(err, &he) {
			malformed = &hintError{header: hint.name, problem: he.problem}
		}
	}
	return 0, false, malformed
}

// parseRetryAfterMs parses a retry-after-ms value as openai-go reads it,
// with strconv.ParseFloat ("800", "0.5", "+5", "1e3", ".5", "5."): a
// number of milliseconds, at most maxRetryAfter (a number past float64's
// range too). A negative, NaN or an infinity is no hint, as openai-go passes
// over it.
func parseRetryAfterMs(value string) (time.Duration, error) {
	f, err := strconv.ParseFloat(value, 64)
	switch {
	case err == nil && f >= 0 && !math.IsInf(f, 1): // NaN fails f >= 0
		if f >= float64(maxRetryAfter/time.Millisecond) {
			return maxRetryAfter, nil
		}
		return time.Duration(f * float64(time.Millisecond)), nil
	case errors.Is(err, strconv.ErrRange) && f > 0: // a number past float64's range
		return maxRetryAfter, nil
	case (err == nil || errors.Is(err, strconv.ErrRange)) && f < 0: // -Inf past the range too
		return 0, &hintError{problem: attrs.HintProblemNegative}
	}
	return 0, &hintError{problem: hintProblem(value, attrs.HintProblemNotANumber)}
}

// parseWholeMs parses a value of a HintWholeMilliseconds header: a whole
// number of milliseconds above 0 (an optional + sign, as strconv.Atoi,
// which azcore uses, takes it), at most maxRetryAfter. Any other value is
// no hint.
func parseWholeMs(value string) (time.Duration, error) {
	ms, err := strconv.ParseInt(value, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && ms > 0 && isDigits(strings.TrimPrefix(value, "+")):
		// Too large: ParseInt reports the overflow as soon as it meets
		// it, before the rest of the value, so the rest is checked here.
		return maxRetryAfter, nil
	case err != nil:
		return 0, &hintError{problem: hintProblem(value, attrs.HintProblemNotANumber)}
	case ms < 0:
		return 0, &hintError{problem: attrs.HintProblemNegative}
	case ms == 0:
		return 0, &hintError{problem: attrs.HintProblemZero}
	case ms > int64(maxRetryAfter/time.Millisecond):
		return maxRetryAfter, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}
