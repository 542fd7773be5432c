// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// hedgeRefusedRun runs n operations one after another, each a GET whose
// first attempt answers 200 only once its hedge was prepared; the hedge's
// PrepareAttemptFunc is prepare (hedged only when hedge is true).
func hedgeRefusedRun(t *testing.T, n int, hedge bool, prepare func(*http.Request) error) (available int) {
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
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	budget := &otelretry.Budget{}
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(mp), otelretry.WithBudget(budget),
		otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
			if attempt == 2 {
				defer func() { hooked <- struct{}{} }()
				return prepare(r)
			}
			return nil
		})}
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
			<-hooked // the hedge was prepared; attempt 1 has not answered yet
		}
		release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	return budget.Available(r)
}

// docs/budget.md: a hedge gives its token back if it is not sent. A hedge
// its PrepareAttemptFunc makes a request net/http refuses is refused at
// its preparation, as one whose PrepareAttemptFunc fails: two operations
// with such hedges leave the host where two unhedged ones do. (It was
// sent, refused by net/http, and kept its token: a reviewer's find.)
func TestAHedgeItsHookMakesUnsendableCostsNoToken(t *testing.T) {
	a := hedgeRefusedRun(t, 2, false, nil)
	c := hedgeRefusedRun(t, 2, true, func(*http.Request) error { return errors.New("signer unavailable") })
	b := hedgeRefusedRun(t, 2, true, func(r *http.Request) error { r.Header.Set("X-Signature", "a\nb"); return nil })
	t.Logf("Available: unhedged %d, hedges prepare_failed %d, hedges refused by net/http %d", a, c, b)
	if a != b {
		t.Errorf("Available after 2 operations with refused hedges = %d; want %d, as without hedging (the refused hedge kept its token)", b, a)
	}
}

// docs/decisions.md row 24 and docs/budget.md: a hedge whose
// PrepareAttemptFunc gave it another scheme, which its preparation does
// not check, is refused by net/http: the host saw nothing. The hedge's
// token was spent when it was handed to the base; it stays lent until the
// hedge's verdict, and a refusal gives it back.
func TestAHedgeNetHTTPRefusesGivesItsTokenBack(t *testing.T) {
	a := hedgeRefusedRun(t, 2, false, nil)
	b := hedgeRefusedRun(t, 2, true, func(r *http.Request) error { r.URL.Scheme = "ftp"; return nil })
	if a != b {
		t.Errorf("Available after 2 operations with hedges net/http refused (another scheme) = %d; want %d, as without hedging", b, a)
	}
}
