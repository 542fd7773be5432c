// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md: an operation a panic ended records no metric of its
// own, and the attempt whose base panicked none either, so the attempts
// counted undercount a panicking call by one (a reviewer found the page
// naming only a Classifier's and a Backoff's panic).
func TestABasesPanicRecordsNoAttemptMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Panic: "boom"}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the base's panic did not reach the caller")
				}
			}()
			h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		}()
		rm := h.collect(t)
		if got := sumBy(t, rm, "retry.attempts", attrs.DecisionKey); !reflect.DeepEqual(got, map[string]int64{"retry": 1}) {
			t.Errorf("retry.attempts by decision = %v, want only the 503's retry", got)
		}
		if got := sumBy(t, rm, "retry.operations", attrs.OutcomeKey); len(got) != 0 {
			t.Errorf("retry.operations = %v, want none", got)
		}
	})
}
