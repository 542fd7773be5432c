// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The deadline is judged before the attempt limit, so the Backoff is asked
// for the last attempt's retryable answer too: a Backoff is called once
// more than the retries made (its godoc says so; a reviewer read the
// order in docs/decisions.md and found the godoc silent).
func TestBackoffIsAskedForTheLastAttemptsAnswerToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []int
		backoff := otelretry.Backoff(func(n int, _ otelretry.Answer) time.Duration { asked = append(asked, n); return time.Millisecond })
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 503}},
			otelretry.WithBackoff(backoff), otelretry.WithMaxAttempts(2))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !reflect.DeepEqual(asked, []int{1, 2}) {
			t.Fatalf("Backoff asked for %v, want [1 2] (one retry made, the last answer's pause asked too)", asked)
		}
		var decisions []string
		for _, e := range h.events(t) {
			decisions = append(decisions, e.Decision)
		}
		if !reflect.DeepEqual(decisions, []string{"retry", "max_attempts"}) {
			t.Fatalf("decisions = %v", decisions)
		}
	})
}
