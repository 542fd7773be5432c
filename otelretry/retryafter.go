// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// maxRetryAfter bounds a parsed Retry-After hint. Larger hints are clamped,
// which changes nothing in practice: every pause is also capped by the
// operation deadline.
const maxRetryAfter = 24 * time.Hour

// errInvalidRetryAfter is wrapped by the error ParseRetryAfter returns for a
// value that is neither delay-seconds nor an HTTP-date.
var errInvalidRetryAfter = errors.New("otelretry: invalid Retry-After")

// ParseRetryAfter parses a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds, a non-negative decimal integer, or an HTTP-date, read
// relative to now. A date in the past yields 0. The result is at most 24
// hours. A malformed value returns an error; the transport then ignores
// the hint and records that it did (retry_after_invalid).
//
// It is exported for AnswerBackoff implementations that read a service's
// own hint in the same two forms (a Retry-After on another status, a
// RateLimit-Reset), so that they parse it exactly as the transport does.
func ParseRetryAfter(value string, now time.Time) (time.Duration, error) {
	if value == "" {
		return 0, fmt.Errorf("%w: empty value", errInvalidRetryAfter)
	}
	if isDigits(value) {
		secs, err := strconv.ParseUint(value, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			// Only overflow can fail here: the value is all digits.
			return maxRetryAfter, nil
		}
		return time.Duration(secs) * time.Second, nil
	}
	date, err := http.ParseTime(value)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is neither delay-seconds nor an HTTP-date", errInvalidRetryAfter, truncate(value, 64))
	}
	return min(max(date.Sub(now), 0), maxRetryAfter), nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
