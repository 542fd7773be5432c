// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/decisions.md (section "The state check", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

var _ = otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
	// Your lookup of the write by its key; ctx carries the operation deadline.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ordersURL+"/by-key/"+c.OperationID, nil)
	resp, err := stateClient.Do(req)
	if err != nil {
		return otelretry.StateResult{}, err // stays unknown
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
	case http.StatusNotFound:
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateNotApplied}, nil
	}
	resp.Body.Close()
	return otelretry.StateResult{State: attrs.StateUnknown}, nil
})
