// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from README.md (section "Unknown writes: `check_state`", snippet 2) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
)

var results otelretry.Results

func snippetUnknownWritesCheckState2() {
	err := createOrder(otelretry.WithResults(ctx, &results)) // an SDK call: err may be only ctx.Err()
	if err != nil && results.OutcomeUnknown() {
		last, _ := results.Last()   // OperationID, Outcome, Reason, Attempts, StatusCode
		reconcile(last.OperationID) // look the write up; never resend it blindly
	}
	_ = err
}
