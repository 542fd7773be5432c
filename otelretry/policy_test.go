package otelretry

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

func TestDecide(t *testing.T) {
	const ms = time.Millisecond
	base := observation{idempotent: true, remainingAfter: 300 * ms, attemptsLeft: 2, backoff: 40 * ms, replayable: true}
	with := func(f func(*observation)) observation { o := base; f(&o); return o }
	cases := []struct {
		name string
		obs  observation
		want attrs.Decision
		wait time.Duration
	}{
		{"200 returns", with(func(o *observation) { o.status = 200 }), attrs.DecisionReturn, 0},
		{"304 returns", with(func(o *observation) { o.status = 304 }), attrs.DecisionReturn, 0},
		{"GET 503 retries", with(func(o *observation) { o.status, o.retryableStatus = 503, true }), attrs.DecisionRetry, 40 * ms},
		{"GET 500 stops", with(func(o *observation) { o.status = 500 }), attrs.DecisionStop, 0},
		{"GET 404 stops", with(func(o *observation) { o.status = 404 }), attrs.DecisionStop, 0},
		{"POST 503 stops", with(func(o *observation) { o.status, o.retryableStatus, o.idempotent = 503, true, false }), attrs.DecisionStop, 0},
		{"GET timeout retries", with(func(o *observation) { o.errorClass = attrs.ErrorClassTimeout }), attrs.DecisionRetry, 40 * ms},
		{"POST timeout checks state", with(func(o *observation) { o.errorClass, o.idempotent = attrs.ErrorClassTimeout, false }), attrs.DecisionCheckState, 0},
		{"POST reset checks state", with(func(o *observation) { o.errorClass, o.idempotent = attrs.ErrorClassConnectionReset, false }), attrs.DecisionCheckState, 0},
		{"POST other stops", with(func(o *observation) { o.errorClass, o.idempotent = attrs.ErrorClassOther, false }), attrs.DecisionStop, 0},
		{"POST refused retries", with(func(o *observation) {
			o.errorClass, o.idempotent, o.neverSent = attrs.ErrorClassConnectionRefused, false, true
		}), attrs.DecisionRetry, 40 * ms},
		{"canceled", with(func(o *observation) { o.errorClass = attrs.ErrorClassCanceled }), attrs.DecisionCanceled, 0},
		{"wait equal to remaining is deadline_exceeded", with(func(o *observation) {
			o.status, o.retryableStatus, o.remainingAfter = 503, true, 40*ms
		}), attrs.DecisionDeadlineExceeded, 0},
		{"Retry-After beyond budget", with(func(o *observation) {
			o.status, o.retryableStatus, o.retryAfter = 503, true, 5*time.Second
		}), attrs.DecisionDeadlineExceeded, 0},
		{"Retry-After longer than backoff wins", with(func(o *observation) {
			o.status, o.retryableStatus, o.retryAfter = 429, true, 100*ms
		}), attrs.DecisionRetry, 100 * ms},
		{"no attempts left", with(func(o *observation) { o.status, o.retryableStatus, o.attemptsLeft = 503, true, 0 }), attrs.DecisionMaxAttempts, 0},
		{"deadline before attempts", with(func(o *observation) {
			o.status, o.retryableStatus, o.attemptsLeft, o.remainingAfter = 503, true, 0, 0
		}), attrs.DecisionDeadlineExceeded, 0},
		{"not replayable stops", with(func(o *observation) { o.status, o.retryableStatus, o.replayable = 503, true, false }), attrs.DecisionStop, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, wait := decide(tc.obs)
			if d != tc.want || wait != tc.wait {
				t.Fatalf("decide = %s, %v; want %s, %v", d, wait, tc.want, tc.wait)
			}
		})
	}
}

func TestAfterStateCheck(t *testing.T) {
	cases := []struct {
		result       attrs.StateCheckResult
		remaining    time.Duration
		attemptsLeft int
		replayable   bool
		want         attrs.Decision
	}{
		{attrs.StateApplied, time.Second, 1, true, attrs.DecisionReturn},
		{attrs.StateNotApplied, time.Second, 1, true, attrs.DecisionRetry},
		{attrs.StateNotApplied, time.Second, 0, true, attrs.DecisionMaxAttempts},
		{attrs.StateNotApplied, 0, 1, true, attrs.DecisionDeadlineExceeded},
		{attrs.StateNotApplied, time.Second, 1, false, attrs.DecisionStop},
		{attrs.StateUnknown, time.Second, 1, true, attrs.DecisionCheckState},
		{"garbage", time.Second, 1, true, attrs.DecisionCheckState},
	}
	for _, tc := range cases {
		if got := afterStateCheck(tc.result, tc.remaining, tc.attemptsLeft, tc.replayable); got != tc.want {
			t.Errorf("afterStateCheck(%s, %v, %d, %v) = %s, want %s", tc.result, tc.remaining, tc.attemptsLeft, tc.replayable, got, tc.want)
		}
	}
}

// FuzzDecide checks the invariants of the rules on arbitrary observations:
// a decision from the closed set; a write that may have been applied is
// never retried; no pause reaches the deadline; return only for 2xx/3xx.
func FuzzDecide(f *testing.F) {
	f.Add(true, 503, uint8(0), false, true, int64(300), 2, int64(40), int64(0), true)
	f.Add(false, 0, uint8(0), false, false, int64(300), 2, int64(40), int64(0), true)
	f.Add(true, 0, uint8(1), true, false, int64(10), 0, int64(40), int64(5000), false)
	f.Fuzz(func(t *testing.T, idempotent bool, status int, classIdx uint8, neverSent, retryableStatus bool,
		remainingMs int64, attemptsLeft int, backoffMs, retryAfterMs int64, replayable bool) {
		classes := attrs.ErrorClasses()
		o := observation{
			idempotent: idempotent, status: status, neverSent: neverSent, retryableStatus: retryableStatus,
			remainingAfter: time.Duration(remainingMs) * time.Millisecond, attemptsLeft: attemptsLeft,
			backoff: time.Duration(max(backoffMs, 0)) * time.Millisecond, retryAfter: time.Duration(max(retryAfterMs, 0)) * time.Millisecond,
			replayable: replayable,
		}
		if status <= 0 {
			o.status = 0
			o.errorClass = classes[int(classIdx)%len(classes)]
			o.neverSent = neverSent && o.errorClass.NotSent()
		}
		d, wait := decide(o)
		if !d.Valid() {
			t.Fatalf("invalid decision %q", d)
		}
		if d == attrs.DecisionRetry {
			if wait >= o.remainingAfter {
				t.Fatalf("retry with a pause of %v and only %v left", wait, o.remainingAfter)
			}
			if wait < o.backoff || wait < o.retryAfter {
				t.Fatalf("pause %v shorter than backoff %v or Retry-After %v", wait, o.backoff, o.retryAfter)
			}
			if o.attemptsLeft <= 0 || !o.replayable {
				t.Fatalf("retry with %d attempts left, replayable=%v", o.attemptsLeft, o.replayable)
			}
			if !o.idempotent && o.status == 0 && !o.neverSent {
				t.Fatalf("a write that may have been applied (%s) was retried", o.errorClass)
			}
			if !o.idempotent && o.status != 0 {
				t.Fatalf("a write was retried on status %d", o.status)
			}
		} else if wait != 0 {
			t.Fatalf("decision %s carries a pause %v", d, wait)
		}
		if d == attrs.DecisionReturn && (o.status < 200 || o.status >= 400) {
			t.Fatalf("return for status %d", o.status)
		}
		if d == attrs.DecisionCheckState && (o.idempotent || o.status != 0) {
			t.Fatalf("check_state for idempotent=%v status=%d", o.idempotent, o.status)
		}
	})
}
