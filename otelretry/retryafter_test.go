// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in      string
		want    time.Duration
		problem attrs.HintProblem // "": well-formed
	}{
		{"0", 0, ""},
		{"120", 2 * time.Minute, ""},
		{"99999999999999999999999", maxRetryAfter, ""},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, ""},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, ""},
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, ""}, // RFC 850, in the past
		{"-1", 0, attrs.HintProblemNegative},
		{"-2.5", 0, attrs.HintProblemNegative},
		{"1.5", 0, attrs.HintProblemFraction},
		{" 10", 0, attrs.HintProblemNotADate},
		{"soon", 0, attrs.HintProblemNotADate},
		{"https://ops:HINT-SECRET@status.example/wait?sig=SIG-SECRET", 0, attrs.HintProblemNotADate},
		{"", 0, attrs.HintProblemEmpty},
		// The grammar's leap second (RFC 9110 §5.6.7: 23:59:60), which
		// time.Parse refuses, in each form: the instant after 23:59:59 (a
		// find left in the note of stop 86). 60 at another time is none.
		{"Mon, 30 Nov 2026 23:59:60 GMT", 12 * time.Hour, ""},
		{"Monday, 30-Nov-26 23:59:60 GMT", 12 * time.Hour, ""},
		{"Mon Nov 30 23:59:60 2026", 12 * time.Hour, ""},
		{"Mon, 30 Nov 2026 12:00:60 GMT", 0, attrs.HintProblemNotADate},
		{"Tue, 30 Nov 2026 23:59:60 GMT", 0, attrs.HintProblemNotADate}, // the wrong day name still
	}
	for _, tc := range cases {
		got, err := parseRetryAfter(tc.in, now)
		if (err != nil) != (tc.problem != "") || got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, problem %q", tc.in, got, err, tc.want, tc.problem)
		}
		checkHintError(t, tc.in, err, "", tc.problem)
	}
}

// checkHintError checks that err, from reading value, is nil when problem
// is "", else that it matches errInvalidRetryAfter, names header and
// problem, and says nothing of the value: a hint may carry anything (a
// URL with credentials), and errors reach logs.
func checkHintError(t *testing.T, value string, err error, header string, problem attrs.HintProblem) {
	t.Helper()
	if err == nil {
		return
	}
	var he *hintError
	if !errors.Is(err, errInvalidRetryAfter) || !errors.As(err, &he) || he.header != header || he.problem != problem {
		t.Errorf("%q: error %v (%#v); want errInvalidRetryAfter, header %q, problem %q", value, err, he, header, problem)
	}
	if len(value) > 2 && strings.Contains(err.Error(), value) {
		t.Errorf("%q: the error %q repeats the value", value, err)
	}
	for _, secret := range []string{"HINT-SECRET", "SIG-SECRET", "soon"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error %q holds %q", value, err, secret)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"0", "5", "Mon, 30 Nov 2026 12:00:10 GMT", "garbage", "-3", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseRetryAfter(s, now)
		if err != nil {
			if d != 0 || !errors.Is(err, errInvalidRetryAfter) {
				t.Fatalf("error %v with duration %v", err, d)
			}
			return
		}
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v out of [0, %v]", s, d, maxRetryAfter)
		}
	})
}

func TestParseRetryAfterMs(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		problem attrs.HintProblem // "": well-formed
	}{
		{"0", 0, ""},
		{"800", 800 * time.Millisecond, ""},
		{"800.5", 800*time.Millisecond + 500*time.Microsecond, ""},
		// Read as openai-go reads them, with strconv.ParseFloat (a
		// reviewer's reading left in the note of stop 86: these were
		// refused).
		{"1200.", 1200 * time.Millisecond, ""},
		{".5", 500 * time.Microsecond, ""},
		{"+5", 5 * time.Millisecond, ""},
		{"1e3", time.Second, ""},
		{"-0", 0, ""},
		{"1e400", maxRetryAfter, ""},
		{"-1e3", 0, attrs.HintProblemNegative},
		{"-Inf", 0, attrs.HintProblemNegative},
		{"-1e400", 0, attrs.HintProblemNegative}, // -Inf past the range (a reviewer's find)
		{"Inf", 0, attrs.HintProblemNotANumber},
		{"NaN", 0, attrs.HintProblemNotANumber},
		{"99999999999999999999999", maxRetryAfter, ""},
		{"86400001", maxRetryAfter, ""},
		{"86400000.5", maxRetryAfter, ""}, // the bound holds with the fraction too
		{"-1", 0, attrs.HintProblemNegative},
		{"-0.5", 0, attrs.HintProblemNegative},
		{" 10", 0, attrs.HintProblemNotANumber},
		{"", 0, attrs.HintProblemEmpty},
		{"soon", 0, attrs.HintProblemNotANumber},
		{"https://ops:HINT-SECRET@status.example/wait?sig=SIG-SECRET", 0, attrs.HintProblemNotANumber},
	}
	for _, tc := range cases {
		got, err := parseRetryAfterMs(tc.in)
		if (err != nil) != (tc.problem != "") || (err == nil && got != tc.want) {
			t.Errorf("parseRetryAfterMs(%q) = %v, %v; want %v, problem %q", tc.in, got, err, tc.want, tc.problem)
		}
		checkHintError(t, tc.in, err, "", tc.problem)
	}
}

// HintWholeMilliseconds is azcore's reading of retry-after-ms: a whole
// number above 0 (strconv.Atoi's, a + sign included); 0, a fraction, a
// negative or any other value is no hint.
func TestParseWholeMs(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"1", time.Millisecond, false},
		{"300", 300 * time.Millisecond, false},
		{"+300", 300 * time.Millisecond, false},
		{"86400001", maxRetryAfter, false},
		{"99999999999999999999999", maxRetryAfter, false},
		{"0", 0, true},
		{"-0", 0, true},
		{"-5", 0, true},
		{"-99999999999999999999999", 0, true},
		{"0.5", 0, true},
		{"300.0", 0, true},
		{"1e3", 0, true},
		{" 10", 0, true},
		{"", 0, true},
		{"soon", 0, true},
	}
	for _, tc := range cases {
		got, err := parseWholeMs(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseWholeMs(%q) = %v, %v; want %v, error=%v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, errInvalidRetryAfter) {
			t.Errorf("error %v does not match errInvalidRetryAfter", err)
		}
	}
}

// The hint is the first header present and well-formed, in the defaults'
// order (retry-after-ms, x-ms-retry-after-ms, Retry-After), after the
// user's own; a malformed one is skipped and reported, and a hint of 0 is
// one, unless the header is read as azcore reads it.
func TestRetryHintOrder(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	defaults := defaultRetryHints()
	withOwn := append([]hintHeader{{name: "X-Ratelimit-Reset-Ms", unit: HintMilliseconds}}, defaults...)
	withEpoch := append([]hintHeader{{name: "X-Ratelimit-Reset", unit: HintSeconds}}, defaults...)
	azcore := newConfig([]Option{WithRetryHint("retry-after-ms", HintWholeMilliseconds),
		WithRetryHint("x-ms-retry-after-ms", HintWholeMilliseconds)}).hints
	cases := []struct {
		name      string
		header    http.Header
		hints     []hintHeader
		want      time.Duration
		ok        bool
		malformed bool
	}{
		{"none", http.Header{}, defaults, 0, false, false},
		{"Retry-After", http.Header{"Retry-After": {"2"}}, defaults, 2 * time.Second, true, false},
		{"retry-after-ms first", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"800"}}, defaults, 800 * time.Millisecond, true, false},
		{"x-ms-retry-after-ms before Retry-After", http.Header{"Retry-After": {"2"}, "X-Ms-Retry-After-Ms": {"300"}}, defaults, 300 * time.Millisecond, true, false},
		{"retry-after-ms before x-ms-retry-after-ms", http.Header{"X-Ms-Retry-After-Ms": {"300"}, "Retry-After-Ms": {"100"}}, defaults, 100 * time.Millisecond, true, false},
		{"a malformed one is skipped", http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"3"}}, defaults, 3 * time.Second, true, true},
		{"only a malformed one", http.Header{"Retry-After": {"soon"}}, defaults, 0, false, true},
		{"a hint of 0", http.Header{"Retry-After-Ms": {"0"}}, defaults, 0, true, false},
		{"the user's own first", http.Header{"X-Ratelimit-Reset-Ms": {"50"}, "Retry-After-Ms": {"800"}}, withOwn, 50 * time.Millisecond, true, false},
		// An epoch time is no delay: read as one, it is capped at 24 hours
		// (WithRetryHint's godoc says to read it in a WithBackoff).
		{"an epoch time read as seconds", http.Header{"X-Ratelimit-Reset": {"1796083200"}}, withEpoch, 24 * time.Hour, true, false},
		// The defaults read milliseconds as openai-go does: 0 and a
		// fraction are hints, and Retry-After is not read.
		{"defaults: retry-after-ms 0 before Retry-After", http.Header{"Retry-After-Ms": {"0"}, "Retry-After": {"3"}}, defaults, 0, true, false},
		{"defaults: retry-after-ms 0.5 before Retry-After", http.Header{"Retry-After-Ms": {"0.5"}, "Retry-After": {"3"}}, defaults, 500 * time.Microsecond, true, false},
		// azcore's reading: 0 and a fraction fall through to the next header.
		{"azcore: retry-after-ms 0 falls through", http.Header{"Retry-After-Ms": {"0"}, "Retry-After": {"3"}}, azcore, 3 * time.Second, true, true},
		{"azcore: x-ms-retry-after-ms 0.5 falls through", http.Header{"X-Ms-Retry-After-Ms": {"0.5"}, "Retry-After": {"3"}}, azcore, 3 * time.Second, true, true},
		{"azcore: a whole number", http.Header{"Retry-After-Ms": {"300"}, "Retry-After": {"3"}}, azcore, 300 * time.Millisecond, true, false},
	}
	for _, tc := range cases {
		d, ok, malformed := retryHint(tc.header, tc.hints, now)
		if d != tc.want || ok != tc.ok || (malformed != nil) != tc.malformed {
			t.Errorf("%s: retryHint = %v, %v, %v; want %v, %v, malformed %v", tc.name, d, ok, malformed, tc.want, tc.ok, tc.malformed)
		}
	}
}

// A malformed hint is reported by its header's name and what was wrong
// with it, the first one of several, never by its value.
func TestRetryHintReportsTheHeaderAndTheProblem(t *testing.T) {
	const secret = "https://ops:HINT-SECRET@status.example/wait?sig=SIG-SECRET"
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	hints := append([]hintHeader{{name: "X-Wait-Ms", unit: HintMilliseconds}}, defaultRetryHints()...)
	cases := []struct {
		header  http.Header
		name    string
		problem attrs.HintProblem
	}{
		{http.Header{"Retry-After-Ms": {secret}, "Retry-After": {"-3"}}, "Retry-After-Ms", attrs.HintProblemNotANumber},
		{http.Header{"X-Ms-Retry-After-Ms": {"-5"}, "Retry-After": {secret}}, "X-Ms-Retry-After-Ms", attrs.HintProblemNegative},
		{http.Header{"Retry-After": {secret}}, "Retry-After", attrs.HintProblemNotADate},
		{http.Header{"Retry-After": {"2.5"}}, "Retry-After", attrs.HintProblemFraction},
		{http.Header{"X-Wait-Ms": {secret}, "Retry-After": {"1"}}, "X-Wait-Ms", attrs.HintProblemNotANumber},
		{http.Header{"Retry-After-Ms": {""}, "Retry-After": {"1"}}, "Retry-After-Ms", attrs.HintProblemEmpty},
	}
	for _, tc := range cases {
		_, _, malformed := retryHint(tc.header, hints, now)
		if malformed == nil {
			t.Errorf("%v: no problem reported", tc.header)
			continue
		}
		checkHintError(t, secret, malformed, tc.name, tc.problem)
	}
}

func FuzzParseRetryAfterMs(f *testing.F) {
	for _, s := range []string{"0", "800", "800.5", "garbage", "-3", "18446744073709551616", "1.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseRetryAfterMs(s)
		if err != nil {
			if d != 0 || !errors.Is(err, errInvalidRetryAfter) {
				t.Fatalf("error %v with duration %v", err, d)
			}
			return
		}
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("parseRetryAfterMs(%q) = %v out of [0, %v]", s, d, maxRetryAfter)
		}
	})
}

// A hint header sent more than once is read by its first value, as
// http.Header's Get reads it (openai-go and azcore read it so): a
// malformed first value is reported and the next header is read, not the
// same header's later value.
func TestARepeatedHintHeaderIsReadByItsFirstValue(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d, ok, malformed := retryHint(http.Header{"Retry-After": {"soon", "7"}}, defaultRetryHints(), now)
	if ok || d != 0 {
		t.Errorf("hint %v (found %t), want none: the first value is malformed", d, ok)
	}
	if malformed == nil || malformed.header != "Retry-After" || malformed.problem != attrs.HintProblemNotADate {
		t.Errorf("malformed = %+v, want Retry-After not_a_date", malformed)
	}
	d, ok, malformed = retryHint(http.Header{"Retry-After": {"3", "soon"}}, defaultRetryHints(), now)
	if !ok || d != 3*time.Second || malformed != nil {
		t.Errorf("hint %v (found %t, malformed %+v), want 3s from the first value", d, ok, malformed)
	}
}
