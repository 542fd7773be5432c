// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/decisions.md (section "The state check", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
	"time"
)

func snippetDecisionsTheStateCheck1() {
	transport := otelretry.NewTransport(nil,
		otelretry.WithDeadline(time.Minute),
		otelretry.WithStateCheckDelay(20*time.Second), // the server applies or drops a write within 20 s
		otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			// Your lookup of the write by its key; ctx carries the operation deadline.
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ordersURL+"/by-key/"+c.OperationID, nil)
			resp, err := stateClient.Do(req)
			if err != nil {
				return otelretry.StateResult{}, err // stays unknown
			}
			switch resp.StatusCode {
			case http.StatusOK:
				return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
			case http.StatusNotFound: // conclusive: the server's bound has passed
				resp.Body.Close()
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}
			resp.Body.Close()
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}))
	_ = transport
}
