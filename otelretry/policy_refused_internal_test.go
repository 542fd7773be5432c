// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// docs/budget.md: a request net/http's Transport refused itself
// (invalid_request) costs no token, nor does the throttle count it: the
// host saw nothing. The same failure not refused is charged and counted.
func TestARefusedRequestIsNeitherChargedNorCounted(t *testing.T) {
	for _, refused := range []bool{true, false} {
		in := input{phase: phaseAttempt, repeatable: true, class: attrs.ErrorClassOther, refused: refused}
		o := budgetCharge(&in, 0, false)
		counted, _ := throttleCount(o)
		if refused && (o != budgetObservation{} || counted) {
			t.Errorf("refused: observation %+v, counted by the throttle %v; want neither", o, counted)
		}
		if !refused && (!o.failure || !counted) {
			t.Errorf("not refused: observation %+v, counted %v; want a failure, counted", o, counted)
		}
	}
}
