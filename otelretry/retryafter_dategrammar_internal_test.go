// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// An HTTP-date is read as its grammar writes it (RFC 9110 §5.6.7): a
// fraction of a second, a one-digit hour or a day name in another case
// made a malformed hint a hint, the fraction read to the nanosecond,
// where delay-seconds with a fraction is refused (a reviewer's find). The
// three forms, written as the grammar writes them, are read.
func TestAnHTTPDateIsReadAsItsGrammarWritesIt(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		value string
		want  time.Duration // -1: refused
	}{
		{"Wed, 01 Jan 2025 00:00:05 GMT", 5 * time.Second},
		{"Wednesday, 01-Jan-25 00:00:05 GMT", 5 * time.Second},
		{"Wed Jan  1 00:00:05 2025", 5 * time.Second},
		{"Wed, 01 Jan 2025 00:00:05.5 GMT", -1},
		{"Wed, 01 Jan 2025 00:00:05.999999999 GMT", -1},
		{"Wed, 01 Jan 2025 0:00:05 GMT", -1},
		{"Wednesday, 01-Jan-25 00:00:05.5 GMT", -1},
		{"Wed Jan  1 00:00:05.5 2025", -1},
		{"wed, 01 jan 2025 00:00:05 GMT", -1},
		{"Wed, 1 Jan 2025 00:00:05 GMT", -1},
		// rfc850-date is in GMT, and asctime's day is padded with a blank
		// or a zero (reviewers' finds, attacking the first version).
		{"Wednesday, 01-Jan-25 00:00:05 PST", -1},
		{"Wednesday, 01-Jan-25 00:00:05 XYZ", -1},
		{"Wed Jan 01 00:00:05 2025", 5 * time.Second},
		{"Sat, 01 Jan 2025 00:00:05 GMT", -1}, // a day name the date does not have
	} {
		d, err := parseRetryAfter(c.value, now)
		if got := map[bool]time.Duration{true: d, false: -1}[err == nil]; got != c.want {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v", c.value, d, err, c.want)
		}
	}
}
