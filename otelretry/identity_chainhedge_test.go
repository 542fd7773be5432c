// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A redirect chain numbers its attempts on from hop to hop, with no id
// given (WithOperationID): a hedge of a later hop refused at its
// preparation gives its number back (identity.unnumber), so the hop's
// retry takes it and the chain's numbers keep no gap, as they do under
// an id (TestAHedgeRefusedAtItsPreparationLeavesNoGapInTheNumbers).
func TestAHedgeRefusedOnARedirectHopLeavesNoGapInTheChainsNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prepares := 0
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusFound, Header: http.Header{"Location": {"/next"}}},
			{Delay: 50 * time.Millisecond, Status: 503},
			{Status: 200},
		}, otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithPrepareAttempt(func(*http.Request, int) error {
				prepares++
				if prepares == 3 { // the first hop's call, the second hop's, then its hedge
					return errors.New("signer unavailable")
				}
				return nil
			}))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("got %d, want 200", resp.StatusCode)
		}
		var numbers []int64
		for _, s := range h.attempts() {
			numbers = append(numbers, readEvent(t, s).Attempt)
		}
		slices.Sort(numbers)
		if want := []int64{1, 2, 3}; !slices.Equal(numbers, want) {
			t.Errorf("the chain's attempt numbers %v (%d preparations), want %v", numbers, prepares, want)
		}
	})
}
