// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// checkOrder says applied only on a 200 (with the order as the response),
// not applied only on a 404, and unknown on any other answer: a lookup that
// failed proves nothing, and a "not applied" there would resend a write
// that may have been applied.
func TestCheckOrderSaysUnknownUnlessTheLookupAnswers(t *testing.T) {
	status := map[string]int{"/orders/state/found": 200, "/orders/state/missing": 404, "/orders/state/broken": 500, "/orders/state/busy": 503}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status[r.URL.Path])
		io.WriteString(w, "order")
	}))
	defer srv.Close()
	env := &environment{baseURL: srv.URL, stateClient: srv.Client()}
	for id, want := range map[string]attrs.StateCheckResult{
		"found": attrs.StateApplied, "missing": attrs.StateNotApplied, "broken": attrs.StateUnknown, "busy": attrs.StateUnknown,
	} {
		res, err := env.checkOrder(t.Context(), otelretry.StateCheck{OperationID: id})
		if err != nil {
			t.Fatal(err)
		}
		if res.State != want || (res.Response != nil) != (want == attrs.StateApplied) {
			t.Errorf("%s: state %s, response %v; want %s, a response only when applied", id, res.State, res.Response != nil, want)
		}
		if res.Response != nil {
			res.Response.Body.Close()
		}
	}
}
