// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestAnotherOperationsUnknownOutcomeIsNotTheCallers: a token fetch (a
// POST) made through an otelretry Transport by a PrepareAttemptFunc or by
// a base below is an operation of its own; its answer lost, its error
// claims an unknown outcome, and the hook returns it. The GET that sent
// nothing matched ErrOutcomeUnknown through that cause, while its Results
// entry said the outcome was known: a caller reconciling on the error
// would reconcile a GET. Only an operation's own Error claims it.
func TestAnotherOperationsUnknownOutcomeIsNotTheCallers(t *testing.T) {
	okay := func(r *http.Request) *http.Response {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	}
	fetchToken := func(rt http.RoundTripper, r *http.Request) error {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, "http://auth.test/token", strings.NewReader("grant_type=client_credentials"))
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	lost := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/token" {
			return nil, io.ErrUnexpectedEOF // sent, its answer lost
		}
		return okay(r), nil
	})
	for name, transport := range map[string]func() http.RoundTripper{
		"a PrepareAttemptFunc's call": func() http.RoundTripper {
			var tr *otelretry.Transport
			tr = otelretry.NewTransport(lost, otelretry.WithDeadline(2*time.Second),
				otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
					if r.URL.Path != "/items" {
						return nil
					}
					return fetchToken(tr, r)
				}))
			return tr
		},
		"a base's side call": func() http.RoundTripper {
			auth := otelretry.NewTransport(lost, otelretry.WithDeadline(2*time.Second))
			return otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if err := fetchToken(auth, r); err != nil {
					return nil, err
				}
				return okay(r), nil
			}), otelretry.WithDeadline(2*time.Second))
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var results otelretry.Results
				resp, err := transport().RoundTrip(get(t, otelretry.WithResults(t.Context(), &results), "http://api.test/items"))
				if resp != nil {
					resp.Body.Close()
				}
				last, _ := results.Last()
				if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("err %v; want the token fetch's error as the cause", err)
				}
				if errors.Is(err, otelretry.ErrOutcomeUnknown) || last.OutcomeUnknown {
					t.Errorf("the GET's error matches ErrOutcomeUnknown: %v; its entry says %v", errors.Is(err, otelretry.ErrOutcomeUnknown), last.OutcomeUnknown)
				}
			})
		})
	}
}
