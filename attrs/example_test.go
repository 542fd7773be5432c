// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs_test

import (
	"fmt"

	"github.com/otelretry/otelretry-go/attrs"
)

// Decisions that end an operation map onto outcomes; retry ends nothing.
// A check_state a state check resolves ends as the check says instead.
func ExampleDecision_Outcome() {
	for _, d := range []attrs.Decision{attrs.DecisionRetry, attrs.DecisionCheckState, attrs.DecisionDeadlineExceeded} {
		fmt.Printf("%s -> %q terminal=%v\n", d, d.Outcome(), d.Terminal())
	}
	// Output:
	// retry -> "" terminal=false
	// check_state -> "check_state" terminal=true
	// deadline_exceeded -> "deadline_exceeded" terminal=true
}

// Only classes that prove the request never left, or that the server
// refused it unprocessed, make a write safe to retry.
func ExampleErrorClass_NotProcessed() {
	for _, c := range attrs.ErrorClasses() {
		fmt.Println(c, c.NotSent(), c.NotProcessed())
	}
	// Output:
	// timeout false false
	// connection_refused true true
	// connection_reset false false
	// dns true true
	// tls true true
	// canceled false false
	// refused_stream false true
	// other false false
	// race_lost false false
}
