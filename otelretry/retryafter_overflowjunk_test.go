// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A HintWholeMilliseconds value whose digits overflow before junk follows
// them is no number, as any value with junk in it: no hint, a
// retry_after_invalid event, and the next header read. It was read as a
// 24 h hint (strconv reports the overflow before it reads the junk), so
// the operation ended deadline_exceeded after one attempt and recorded
// retry.retry_after_ms=86400000 (a reviewer's find). All digits, it is a
// hint too large, held at 24 h, as before.
func TestJunkAfterOverflowingDigitsIsNoWholeMillisecondsHint(t *testing.T) {
	for _, tc := range []struct {
		value string
		junk  bool
	}{
		{"99999999999999999999hunter2", true},
		{"99999999999999999999", false},
	} {
		t.Run(tc.value, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				run := hintedThenOK(t, tc.value, otelretry.WithRetryHint("retry-after-ms", otelretry.HintWholeMilliseconds))
				r, took := run.result, run.took
				invalid := false
				for _, s := range run.spans {
					for _, e := range s.Events() {
						invalid = invalid || e.Name == attrs.EventRetryAfterInvalid
					}
				}
				if tc.junk && (r.Outcome != attrs.OutcomeReturn || r.Attempts != 2 || took != time.Second || !invalid) {
					t.Errorf("%s (%s) after %d attempts in %v, retry_after_invalid %v; want return after 2, 1 s apart (Retry-After read next), the junk reported",
						r.Outcome, r.Reason, r.Attempts, took, invalid)
				}
				if !tc.junk && (r.Outcome != attrs.OutcomeDeadlineExceeded || r.Attempts != 1 || invalid) {
					t.Errorf("%s (%s) after %d attempts, retry_after_invalid %v; want deadline_exceeded after 1: a 24 h hint", r.Outcome, r.Reason, r.Attempts, invalid)
				}
			})
		})
	}
}
