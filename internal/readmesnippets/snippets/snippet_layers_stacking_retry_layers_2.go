// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/layers.md (section "Stacking retry layers", snippet 2) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"errors"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

func otelretryDecides(ctx context.Context, resp *http.Response, err error) (bool, error) {
	var oe *otelretry.Error
	if errors.As(err, &oe) {
		// otelretry's error says whether another try may help (its
		// attempts ran out, no write's outcome unknown, nothing the budget
		// or a throttle held back): keep it, also once the caller's
		// context is done.
		retry := oe.RetryableError() && ctx.Err() == nil
		return retry, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, nil
}
