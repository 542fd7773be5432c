// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// rejects fails each call with the next of its HTTP/3 errors, then
// answers 201, as a server would over HTTP/3.
type rejects []*http3.Error

func (s *rejects) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(*s) == 0 {
		return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	err := (*s)[0]
	*s = (*s)[1:]
	return nil, err
}

// Retry over HTTP/3: a POST the server rejected with H3_REQUEST_REJECTED
// is resent; any other reset of a POST, or the client's own rejection,
// ends check_state, its outcome unknown. Over a
// real server the base is an *http3.Transport:
//
//	client := &http.Client{Transport: otelretry.NewTransport(&http3.Transport{},
//		otelretry.WithClassifier(h3.Classify))}
func ExampleClassify() {
	for _, reset := range []*http3.Error{
		{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}, // the server's: proof
		{ErrorCode: http3.ErrCodeInternalError, Remote: true},
		{ErrorCode: http3.ErrCodeRequestRejected}, // the client's own: no proof
	} {
		base := &rejects{reset}
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify))}
		var results otelretry.Results
		ctx := otelretry.WithResults(context.Background(), &results)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.example.com/orders", strings.NewReader(`{"sku":1}`))
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
		r, _ := results.Last()
		fmt.Printf("%s (remote %v): %s after %d attempts, outcome unknown %v\n", reset.ErrorCode, reset.Remote, r.Outcome, r.Attempts, r.OutcomeUnknown)
	}
	// Output:
	// H3_REQUEST_REJECTED (remote true): return after 2 attempts, outcome unknown false
	// H3_INTERNAL_ERROR (remote true): check_state after 1 attempts, outcome unknown true
	// H3_REQUEST_REJECTED (remote false): check_state after 1 attempts, outcome unknown true
}
