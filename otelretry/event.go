// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// observation is what one attempt saw: its timing, what came back (a
// response's status and hint, or an error and the class it was observed
// as), and what the base reported of the wire. The attempt gathers it
// (attempt.observe); the operation decides on it.
type observation struct {
	number     int           // the attempt's number (retry.attempt)
	start, end time.Duration // since the operation's start: sent, and answered or failed
	remaining  time.Duration // the operation's time left before the call
	url        *url.URL      // the prepared URL, when a PrepareAttemptFunc may have changed it

	status        int
	header        http.Header
	contentLength int64

	err      error
	class    attrs.ErrorClass // as observed: classify, or the cut that ended it
	timedOut bool             // the attempt timer fired before the answer

	writes int32 // writes on the wire (httptrace); 0 when the base reports none
	// written: the request may have reached the server (wire.reachedWire).
	written bool
	// reportsWrites: the base reports its writes through httptrace.
	reportsWrites bool
	// silent: the base reported nothing of the attempt through httptrace
	// (wire.silent), and it is not net/http's Transport, whose silence
	// says it never asked for a connection. Below a layer, asking for the
	// attempt's ClientTrace proves nothing: a wrapper asks for it over a
	// custom base as readily as net/http does.
	silent bool
	// unsent: what the error or httptrace says proves the request never
	// left (neverSent, wire.unsentByTrace).
	unsent bool
	// refusal: what refused the request such that it is refused again
	// (attempt.refusedByTransport, certificateRejected).
	refusal refusal
	// wireEvidence is the protocol's proof read from the error itself
	// (h2Unprocessed).
	wireEvidence Evidence
	wireProved   bool
	// landedBelow: the base's error says the write may have been applied
	// below (mayHaveLanded): no classifier's word proves it was not.
	landedBelow bool

	retryAfter      time.Duration
	hasRetryAfter   bool
	retryAfterError *hintError // a hint header was present but malformed

	// verdict is the service's word on retrying its answer, and the header
	// that said it.
	verdict       serverVerdict
	verdictHeader string
	// replayed: the answer says it was replayed from the server's store of
	// answers by idempotency key.
	replayed bool

	// hedge is the attempt's place in a race of hedged attempts.
	hedge hedgeLink
}

// racing is o with its attempt's place in a race of hedged attempts.
func (o observation) racing(l hedgeLink) observation {
	o.hedge = l
	return o
}

// hedgeLink is an attempt's place in a race of hedged attempts: of is the
// number of the attempt it hedges (0: it is no hedge); sentAfter is how
// long after its start its own hedge was sent, when one was (hedged).
type hedgeLink struct {
	of        int
	sentAfter time.Duration
	hedged    bool
}

// dialect is what the transport reads of an answer beyond its status:
// the retry hint headers, in order, and the should-retry headers.
type dialect struct {
	hints    []hintHeader
	verdicts []string
}

// attemptSeen is what an attempt saw whatever came back.
type attemptSeen struct {
	number        int
	start, end    time.Duration
	remaining     time.Duration
	url           *url.URL
	timedOut      bool
	writes        int32
	written       bool
	reportsWrites bool
	silent        bool
	landedBelow   bool
}

// failure is the observation of an attempt that got no response: its
// error, the class it was observed as, whether it proves the request
// unsent, what refused it (f), and the protocol's proof read from it.
func (s attemptSeen) failure(err error, class attrs.ErrorClass, unsent bool, f refusal, evidence Evidence, proved bool) observation {
	o := s.observation()
	o.err, o.class, o.unsent, o.refusal, o.wireEvidence, o.wireProved = err, class, unsent, f, evidence, proved
	return o
}

// response is the observation of an attempt that got resp at now: its
// status, the server's retry hint and its verdict on a retry, read as d
// says.
func (s attemptSeen) response(resp *http.Response, now time.Time, d *dialect) observation {
	o := s.observation()
	o.status, o.header, o.contentLength = resp.StatusCode, resp.Header, resp.ContentLength
	o.retryAfter, o.hasRetryAfter, o.retryAfterError = retryHint(resp.Header, d.hints, now)
	if !success(resp.StatusCode) {
		o.verdict, o.verdictHeader = shouldRetry(resp.Header, d.verdicts)
	}
	o.replayed = replayed(resp.Header)
	return o
}

// mayHaveLanded is s for an attempt whose base said its write may have
// been applied (an error claiming an unknown outcome, or another otelretry
// operation's that made attempts), though the base reported no write.
func (s attemptSeen) mayHaveLanded() attemptSeen {
	s.written, s.landedBelow = true, true
	return s
}

func (s attemptSeen) observation() observation {
	return observation{number: s.number, start: s.start, end: s.end, remaining: s.remaining, url: s.url,
		timedOut: s.timedOut, writes: s.writes, written: s.written, reportsWrites: s.reportsWrites, silent: s.silent,
		landedBelow: s.landedBelow}
}

// attemptEvent is the record of one network attempt, built once by
// newAttemptEvent from what the attempt observed and the verdict. The
// recorder writes it to the attempt span, the log record, the slog record
// and the metrics (recorder.recordAttempt), each the fields it carries, so
// that the four cannot disagree.
type attemptEvent struct {
	attempt   int              // the attempt's number, counting across redirect hops
	status    int              // 0 when no response arrived
	class     attrs.ErrorClass // "" when a response arrived
	evidence  Evidence         // the proof a retry rests on (recordedEvidence)
	elapsed   time.Duration
	remaining time.Duration // operation time left before the call
	end       time.Duration // since the operation's start: when the answer or failure came
	verdict   verdict
	writes    int32    // writes on the wire (httptrace); 0 when the base reports none
	replayed  bool     // the answer was replayed by idempotency key
	url       *url.URL // the prepared request's URL, as it went on the wire
	requestID string   // "" until the recorder needs it: the span and the logs share it

	retryAfter      time.Duration
	hasRetryAfter   bool
	retryAfterError *hintError // set when a hint header was present but malformed

	hedge hedgeLink
}

// newAttemptEvent builds the attempt's event: what it observed, the class
// it records (recordedClass), the evidence where the verdict rests on it
// (recordedEvidence), and the verdict.
func newAttemptEvent(o *observation, class attrs.ErrorClass, evidence Evidence, v verdict) attemptEvent {
	ev := attemptEvent{
		attempt:   o.number,
		status:    o.status,
		class:     class,
		evidence:  recordedEvidence(evidence, v),
		elapsed:   o.end - o.start,
		remaining: o.remaining,
		end:       o.end,
		verdict:   v,
		writes:    o.writes,
		replayed:  o.replayed,
		url:       o.url,

		retryAfter:      o.retryAfter,
		hasRetryAfter:   o.hasRetryAfter,
		retryAfterError: o.retryAfterError,

		hedge: o.hedge,
	}
	if o.err == nil && ev.writes == 0 && o.reportsWrites {
		// An answer proves the request went out: an HTTP/2 client may report
		// the write (WroteRequest) only after the response arrived.
		ev.writes = 1
	}
	return ev
}

// requestIDOf is the attempt's retry.request.id in operation opID, made
// once: the span and the logs share it.
func (ev *attemptEvent) requestIDOf(opID string) string {
	if ev.requestID == "" {
		ev.requestID = RequestID(opID, ev.attempt)
	}
	return ev.requestID
}

// errorType is the semantic conventions' error.type of the attempt: its
// error class, or the status code of an answer that is not a success (a
// 2xx, a 3xx or a 101, as the decision reads them); "" for a success.
func (ev *attemptEvent) errorType() string {
	switch {
	case ev.class != "":
		return string(ev.class)
	case ev.status != 0 && !success(ev.status):
		return statusCode(ev.status)
	}
	return ""
}

// statusCodes is every status code from 100 to 999 in decimal, one after
// the other, so that an attempt's error type is a slice of it: an attempt
// answered 503 allocates nothing for it.
var statusCodes = func() string {
	b := make([]byte, 0, 3*900)
	for code := 100; code <= 999; code++ {
		b = strconv.AppendInt(b, int64(code), 10)
	}
	return string(b)
}()

// statusCode is code in decimal.
func statusCode(code int) string {
	if code < 100 || code > 999 {
		return strconv.Itoa(code)
	}
	i := 3 * (code - 100)
	return statusCodes[i : i+3]
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
