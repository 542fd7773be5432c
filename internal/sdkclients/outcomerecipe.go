// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The result slot of docs/sdk-recipes.md ("The outcome an SDK rewrites"),
// as code the tests use: keep the two the same.

// keepOutcomeUnknown makes one SDK call with a result slot and returns its
// error, joined to otelretry's when one of the call's operations left a
// write whose outcome is unknown and the error the SDK returned no longer
// says so: azcore, openai-go and smithy-go (the AWS SDK) return ctx.Err()
// once the context is done, and http.Client's Timeout flattens the error
// to text.
func keepOutcomeUnknown(ctx context.Context, call func(context.Context) error) error {
	var results otelretry.Results
	err := call(otelretry.WithResults(ctx, &results))
	if err == nil || errors.Is(err, otelretry.ErrOutcomeUnknown) {
		return err
	}
	for _, op := range results.Operations() {
		if op.OutcomeUnknown {
			cause := op.Err // nil when it returned a response: a keyed write's last 503
			if cause == nil {
				cause = fmt.Errorf("operation %q: %w", op.OperationID, otelretry.ErrOutcomeUnknown)
			}
			return fmt.Errorf("%w: %w", err, cause)
		}
	}
	return err
}
