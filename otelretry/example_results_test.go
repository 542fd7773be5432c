// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The slot is the one signal no layer above can rewrite: an SDK loop that
// reports an error of its own (a generic one, or ctx.Err() once the
// context is done, as azcore's and openai-go's do) hides the unknown
// outcome from the error, never from the slot.
func ExampleWithResults() {
	base := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done() // the create is applied; its answer never comes
		return nil, r.Context().Err()
	})
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithDeadline(20*time.Millisecond))}
	sdkCall := func(req *http.Request) error { // like an SDK that reports only its context's error
		resp, err := client.Do(req)
		if err != nil {
			if req.Context().Err() != nil {
				return req.Context().Err()
			}
			return errors.New("request failed")
		}
		resp.Body.Close()
		return nil
	}

	var results otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(context.Background(), "create-42"), &results)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", nil)
	err := sdkCall(req)
	last, _ := results.Last()
	fmt.Println("error:", err)
	fmt.Println("outcome unknown:", results.OutcomeUnknown(), "- look up", last.OperationID)
	// Output:
	// error: request failed
	// outcome unknown: true - look up create-42
}

// roundTripperFunc is a base written as a function.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
