// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// seen is what an attempt numbered 3 saw: sent 100ms and answered 250ms
// after the operation's start, with 900ms left at the call.
func seen(writes int32, reportsWrites bool) attemptSeen {
	return attemptSeen{number: 3, start: 100 * time.Millisecond, end: 250 * time.Millisecond, remaining: 900 * time.Millisecond,
		url: &url.URL{Scheme: "https", Host: "api.test", Path: "/v1"}, writes: writes, written: writes > 0, reportsWrites: reportsWrites}
}

// defaultDialect reads the answers as a Transport does by default.
var defaultDialect = &dialect{hints: defaultRetryHints(), verdicts: defaultShouldRetryHeaders()}

// An answer proves that its request went out: the event of an attempt
// that got a response records at least one write when the base reports
// its writes (an HTTP/2 client may report the write only after the
// response came), none when the base reports nothing through httptrace,
// and the writes reported as they are otherwise; a failure records only
// the writes reported.
func TestAttemptEventWritesOfAnAnswer(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}}
	cases := []struct {
		name          string
		writes        int32
		reportsWrites bool
		failed        bool
		want          int32
	}{
		{"answer, write reported late", 0, true, false, 1},
		{"answer, silent base", 0, false, false, 0},
		{"answer, one write", 1, true, false, 1},
		{"answer, resent below", 2, true, false, 2},
		{"failure, nothing written", 0, true, true, 0},
		{"failure, one write", 1, true, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := seen(tc.writes, tc.reportsWrites)
			o := s.response(resp, time.Now(), defaultDialect)
			class := attrs.ErrorClass("")
			if tc.failed {
				o, class = s.failure(io.ErrUnexpectedEOF, attrs.ErrorClassConnectionReset, false, refusal{}, Evidence{}, false), attrs.ErrorClassConnectionReset
			}
			if ev := newAttemptEvent(&o, class, Evidence{}, verdict{}); ev.writes != tc.want {
				t.Errorf("writes = %d, want %d", ev.writes, tc.want)
			}
		})
	}
}

// The event is built from the observation and the verdict, once: the
// attempt's number, status or class and evidence, how long it took, the
// time left at the call, when it ended, its URL and its Retry-After.
func TestAttemptEventIsTheObservationAndTheVerdict(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus, pause: 2 * time.Second}
	s := seen(1, true)
	o := s.response(&http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"2"}}, ContentLength: 5}, now, defaultDialect)
	ev := newAttemptEvent(&o, "", Evidence{}, v)
	if ev.attempt != 3 || ev.status != 503 || ev.class != "" || ev.elapsed != 150*time.Millisecond || ev.remaining != 900*time.Millisecond ||
		ev.end != 250*time.Millisecond || ev.verdict != v || ev.url != s.url || ev.retryAfter != 2*time.Second || !ev.hasRetryAfter || ev.retryAfterError != nil {
		t.Errorf("event of a 503 = %+v", ev)
	}
	refused := Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"}
	f := s.failure(io.ErrUnexpectedEOF, attrs.ErrorClassConnectionReset, false, refusal{}, refused, true)
	ev = newAttemptEvent(&f, attrs.ErrorClassRefusedStream, refused, v)
	if ev.status != 0 || ev.class != attrs.ErrorClassRefusedStream || ev.evidence != refused || ev.hasRetryAfter {
		t.Errorf("event of a refused stream = %+v", ev)
	}
	// The evidence is recorded only where the decision rests on it (see
	// recordedEvidence); the class stays.
	for _, stop := range []verdict{{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}, {decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}} {
		ev = newAttemptEvent(&f, attrs.ErrorClassRefusedStream, refused, stop)
		if ev.class != attrs.ErrorClassRefusedStream || ev.evidence.present() {
			t.Errorf("event of a refused stream ended %s/%s = %+v; want its class and no evidence", stop.decision, stop.reason, ev)
		}
	}
}

// An answer's Retry-After is read once, at the answer: seconds or an
// HTTP date; a malformed value is kept as an error and is no hint, an
// empty one too (a header present with no value is malformed, not absent).
func TestAttemptSeenReadsTheRetryAfterOfAnAnswer(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		value     []string
		want      time.Duration
		has, fail bool
	}{
		{nil, 0, false, false},
		{[]string{""}, 0, false, true},
		{[]string{"3"}, 3 * time.Second, true, false},
		{[]string{now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true, false},
		{[]string{"soon"}, 0, false, true},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.value != nil {
			h["Retry-After"] = tc.value
		}
		o := seen(1, true).response(&http.Response{StatusCode: 429, Header: h, ContentLength: 12}, now, defaultDialect)
		if o.retryAfter != tc.want || o.hasRetryAfter != tc.has || (o.retryAfterError != nil) != tc.fail {
			t.Errorf("Retry-After %q: %v, has %v, error %v; want %v, %v, error %v", tc.value, o.retryAfter, o.hasRetryAfter, o.retryAfterError, tc.want, tc.has, tc.fail)
		}
		if o.status != 429 || o.contentLength != 12 || o.err != nil || o.number != 3 {
			t.Errorf("observation of a 429 = %+v", o)
		}
	}
}

// A failure's observation keeps the error, the class it was observed as,
// whether it proves the request unsent, and the protocol's proof.
func TestAttemptSeenFailure(t *testing.T) {
	err := errors.New("stream refused")
	e := Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"}
	o := seen(0, true).failure(err, attrs.ErrorClassOther, true, refusal{}, e, true)
	if o.err != err || o.class != attrs.ErrorClassOther || !o.unsent || o.wireEvidence != e || !o.wireProved || o.status != 0 || o.number != 3 || o.hasRetryAfter {
		t.Errorf("observation of a failure = %+v", o)
	}
}

// The attempt's request id is made once, from the operation id and the
// attempt's number, so that the span and the log records share it.
func TestAttemptEventRequestIDIsMadeOnce(t *testing.T) {
	ev := attemptEvent{attempt: 4}
	if got := ev.requestIDOf("op-1"); got != "op-1/attempt-4" {
		t.Errorf("request id = %q, want op-1/attempt-4", got)
	}
	if got := ev.requestIDOf("op-2"); got != "op-1/attempt-4" {
		t.Errorf("second request id = %q, want the first one, op-1/attempt-4", got)
	}
}

// error.type is the error class of a failure, the status code of an
// answer that is not a 2xx or 3xx, and empty for a success.
func TestAttemptEventErrorType(t *testing.T) {
	for _, tc := range []struct {
		ev   attemptEvent
		want string
	}{
		{attemptEvent{class: attrs.ErrorClassTimeout}, "timeout"},
		{attemptEvent{status: 503}, "503"},
		{attemptEvent{status: 404}, "404"},
		{attemptEvent{status: 200}, ""},
		{attemptEvent{status: 302}, ""},
	} {
		if got := tc.ev.errorType(); got != tc.want {
			t.Errorf("errorType of %+v = %q, want %q", tc.ev, got, tc.want)
		}
	}
}

// A service's verdict on retrying is read from a failed answer only: a
// success is never retried, whatever its headers say.
func TestAttemptSeenReadsTheVerdictOfAFailedAnswerOnly(t *testing.T) {
	h := http.Header{"X-Should-Retry": {"true"}}
	o := seen(1, true).response(&http.Response{StatusCode: 503, Header: h}, time.Now(), defaultDialect)
	if o.verdict != verdictRetry || o.verdictHeader != "X-Should-Retry" {
		t.Errorf("503 with X-Should-Retry: true: verdict %v from %q", o.verdict, o.verdictHeader)
	}
	o = seen(1, true).response(&http.Response{StatusCode: 200, Header: h}, time.Now(), defaultDialect)
	if o.verdict != verdictNone || o.verdictHeader != "" {
		t.Errorf("200 with X-Should-Retry: true: verdict %v from %q, want none", o.verdict, o.verdictHeader)
	}
}

// An attempt's error type spells its status code in decimal, every code
// from 100 to 999 from one string made once, any other as strconv does.
func TestStatusCodeIsDecimal(t *testing.T) {
	for _, code := range []int{0, 99, 100, 101, 200, 429, 503, 599, 999, 1000, -1} {
		if got, want := statusCode(code), strconv.Itoa(code); got != want {
			t.Errorf("statusCode(%d) = %q, want %q", code, got, want)
		}
	}
	for code := 100; code <= 999; code++ {
		if got := statusCode(code); got != strconv.Itoa(code) {
			t.Fatalf("statusCode(%d) = %q", code, got)
		}
	}
}
