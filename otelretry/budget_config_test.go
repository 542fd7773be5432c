// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// captureOtelErrors installs an error handler that keeps what otel.Handle
// receives, and restores the previous one when the test ends.
func captureOtelErrors(t *testing.T) func() []error {
	t.Helper()
	var (
		mu   sync.Mutex
		errs []error
	)
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}

// roundTripNoPanic runs one GET to url through rt and fails the test,
// instead of crashing it, when RoundTrip panics. It returns the status
// (0 on error).
func roundTripNoPanic(t *testing.T, rt http.RoundTripper, url string) (status int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("RoundTrip panicked: %v", r)
			status = -1
		}
	}()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func quietOptions(opts ...otelretry.Option) []otelretry.Option {
	return append([]otelretry.Option{
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
	}, opts...)
}

// Issue 25, item 13: the zero Budget works, with the default settings: a
// dependency that always fails gets a fresh host's two retries and then
// none, exactly as with NewBudget(), and nothing panics.
func TestBudgetZeroValueThroughTransport(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget func() *otelretry.Budget
	}{
		{"zero Budget", func() *otelretry.Budget { return &otelretry.Budget{} }},
		{"NewBudget()", func() *otelretry.Budget { return otelretry.NewBudget() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reported := captureOtelErrors(t)
				b := c.budget()
				base := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusServiceUnavailable})
				tr := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(b))...)
				// Operation 1: 503, 503, 503 (two retries, max_attempts).
				// Operations 2 and 3: one attempt each (budget_exhausted).
				for i, wantCalls := range []int{3, 4, 5} {
					if got := roundTripNoPanic(t, tr, "http://dependency.test/"); got != http.StatusServiceUnavailable {
						t.Errorf("operation %d: status %d, want the 503", i+1, got)
					}
					if got := len(base.Calls()); got != wantCalls {
						t.Fatalf("after operation %d: %d calls, want %d", i+1, got, wantCalls)
					}
				}
				req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
				if got := b.Available(req); got != 0 {
					t.Errorf("Available after the outage = %d, want 0", got)
				}
				other, _ := http.NewRequest(http.MethodGet, "http://other.test/", nil)
				if got := b.Available(other); got != otelretry.DefaultBudgetTokens/2-1 {
					t.Errorf("Available for another host = %d, want a fresh host's %d", got, otelretry.DefaultBudgetTokens/2-1)
				}
				if errs := reported(); len(errs) != 0 {
					t.Errorf("reported %v, want nothing", errs)
				}
			})
		})
	}
}

// The zero Budget shared by Transports used from many goroutines: no
// panic, no race, and the combined retries to one failing host are a
// fresh host's two.
func TestBudgetZeroValueConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &otelretry.Budget{}
		base := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusServiceUnavailable})
		const transports, ops = 4, 25
		var wg sync.WaitGroup
		for range transports {
			tr := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(b))...)
			for range ops {
				wg.Go(func() { roundTripNoPanic(t, tr, "http://dependency.test/") })
			}
		}
		wg.Wait()
		// Operations that fail at the same instant may each be admitted
		// before seeing the others' failures, so at most two retries each
		// of the first instant's operations; after that, none.
		if calls := len(base.Calls()); calls < transports*ops+2 || calls > 3*transports*ops {
			t.Fatalf("%d calls for %d operations", calls, transports*ops)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
		if got := b.Available(req); got != 0 {
			t.Errorf("Available after the outage = %d, want 0", got)
		}
	})
}

// Issue 25, item 13: EvidenceClassifier(nil) returns nil, which
// WithClassifier ignores, and the mistake is reported through otel.Handle;
// an attempt that fails with no response then takes the default rules
// instead of panicking.
func TestEvidenceClassifierNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reported := captureOtelErrors(t)
		c := otelretry.EvidenceClassifier(nil)
		if c != nil {
			t.Errorf("EvidenceClassifier(nil) returned a Classifier, want nil")
		}
		errs := reported()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "EvidenceClassifier") {
			t.Errorf("reported %v, want one error naming EvidenceClassifier", errs)
		}

		base := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Err: errors.New("connection reset by peer")})
		tr := otelretry.NewTransport(base, quietOptions(otelretry.WithClassifier(c), otelretry.WithoutBudget())...)
		if got := roundTripNoPanic(t, tr, "http://dependency.test/"); got != 0 {
			t.Errorf("status %d, want the transport error", got)
		}
		// Without a classifier the default rules retry a GET's transport
		// error up to the attempt limit.
		if got := len(base.Calls()); got != otelretry.DefaultMaxAttempts {
			t.Errorf("%d calls, want %d (the default rules)", got, otelretry.DefaultMaxAttempts)
		}
	})
}
