package attrs_test

import (
	"fmt"

	"github.com/otelretry/otelretry-go/attrs"
)

// Decisions that end an operation map onto outcomes; retry ends nothing.
func ExampleDecision_Outcome() {
	for _, d := range []attrs.Decision{attrs.DecisionRetry, attrs.DecisionCheckState, attrs.DecisionDeadlineExceeded} {
		fmt.Printf("%s -> %q terminal=%v\n", d, d.Outcome(), d.Terminal())
	}
	// Output:
	// retry -> "" terminal=false
	// check_state -> "check_state" terminal=true
	// deadline_exceeded -> "deadline_exceeded" terminal=true
}

// Only classes that prove the request never left make a write safe to
// retry.
func ExampleErrorClass_NotSent() {
	for _, c := range attrs.ErrorClasses() {
		fmt.Println(c, c.NotSent())
	}
	// Output:
	// timeout false
	// connection_refused true
	// connection_reset false
	// dns true
	// tls true
	// canceled false
	// other false
}
