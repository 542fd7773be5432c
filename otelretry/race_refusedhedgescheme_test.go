// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// refusedHedgeRun runs n operations one after another, each a GET whose first
// attempt answers 200 only once its hedge was prepared; the hedge's
// PrepareAttemptFunc applies mutate (nil: no hedging).
func refusedHedgeRun(t *testing.T, n int, mutate func(r *http.Request)) (available int, ops []otelretry.OperationResult) {
	release := make(chan struct{}, n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	hooked := make(chan struct{}, n)
	budget := &otelretry.Budget{}
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	opts := []otelretry.Option{otelretry.WithBudget(budget),
		otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
			if attempt == 2 {
				defer func() { hooked <- struct{}{} }()
				mutate(r)
			}
			return nil
		})}
	hedge := mutate != nil
	if hedge {
		opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}))
	}
	tr := otelretry.NewTransport(base, opts...)
	var res otelretry.Results
	ctx := otelretry.WithResults(t.Context(), &res)
	for i := range n {
		done := make(chan error, 1)
		go func() {
			resp, err := tr.RoundTrip(get(t, ctx, srv.URL))
			if err == nil {
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("op %d: status %d", i, resp.StatusCode)
				}
			}
			done <- err
		}()
		if hedge {
			<-hooked
		}
		release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	return budget.Available(r), res.Operations()
}

// docs/decisions.md row 24 and docs/budget.md: a hedge whose
// PrepareAttemptFunc gave it another scheme, which its preparation does
// not check, is refused by net/http: the host saw nothing. The hedge's
// token was spent when it was handed to the base; it stays lent until the
// hedge's verdict, and a refusal gives it back.
func TestAHedgeNetHTTPRefusesGivesItsTokenBack(t *testing.T) {
	a, _ := refusedHedgeRun(t, 2, nil)
	for name, mutate := range map[string]func(*http.Request){
		"scheme": func(r *http.Request) { r.URL.Scheme = "ftp" },
	} {
		b, ops := refusedHedgeRun(t, 2, mutate)
		for _, op := range ops {
			t.Logf("%s: outcome %s reason %s attempts %d", name, op.Outcome, op.Reason, op.Attempts)
		}
		if a != b {
			t.Errorf("%s: Available after 2 operations with hedges net/http refused = %d; want %d, as without hedging", name, b, a)
		}
	}
}
