// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
)

// budget.md: "Every channel records a refusal: the operation span and its
// log record (throttled), the attempt whose retry was refused,
// retry.operations by outcome, and retry.throttled". A keyed write whose
// answer was lost asks for its resend under its key; the throttle refuses
// it (and counts the refusal as a request). With WithStateCheck, the
// refusal now leads to the state check (decisions.md, footnote 2). The
// throttle counted a refused request; retry.throttled must count it too.
func TestThrottleRefusalOfAKeyedResendIsCounted(t *testing.T) {
	for _, state := range []attrs.StateCheckResult{"", attrs.StateUnknown, attrs.StateApplied, attrs.StateNotApplied} {
		name := string(state)
		if name == "" {
			name = "no state check (control)"
		}
		t.Run(name, func(t *testing.T) {
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				if r.Body != nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
			})
			th := &Throttle{rand: func() float64 { return 0 }} // admits only at a rejection of 0: the first attempt
			reader := sdkmetric.NewManualReader()
			opts := []Option{WithTracerProvider(tracenoop.NewTracerProvider()),
				WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
				WithThrottle(th), WithoutBudget(), WithIdempotencyKeys(DraftIdempotencyKey())}
			if state != "" {
				opts = append(opts, WithStateCheck(func(ctx context.Context, c StateCheck) (StateResult, error) {
					r := StateResult{State: state}
					if state == attrs.StateApplied {
						r.Response = &http.Response{StatusCode: 201, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}
					}
					return r, nil
				}))
			}
			tr := NewTransport(base, opts...)
			var res Results
			req, _ := http.NewRequestWithContext(WithResults(t.Context(), &res), http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			requests, accepts := throttleCounts(th, "api.test")
			refusals := int(requests) - 1 // one attempt was sent, and counted as it failed
			metric := counterSum(t, reader, "retry.throttled")
			t.Logf("ended %s/%s; throttle: %v requests (%d refusals), %v accepts; retry.throttled %d", last.Outcome, last.Reason, requests, refusals, accepts, metric)
			if int(metric) != refusals {
				t.Errorf("the throttle refused %d requests (it counts them); retry.throttled counts %d (ended %s/%s)", refusals, metric, last.Outcome, last.Reason)
			}
		})
	}
}

// An outage of keyed writes, 32 and 64 in flight together, each answer
// lost, a state check that says not_applied: the resends (retries under
// the key and the check's) stay within the budget's two per client
// (budget.md: "in an outage ... two retries per client in all"; a
// check's resend takes a token of its own).
func TestKeyedWritesInAnOutageStayInTheBudget(t *testing.T) {
	for _, inFlight := range []int{32, 64} {
		for _, state := range []attrs.StateCheckResult{attrs.StateNotApplied, attrs.StateUnknown} {
			t.Run(fmt.Sprintf("inFlight=%d/%s", inFlight, state), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var calls, checks atomic.Int64
					base := baseFunc(func(r *http.Request) (*http.Response, error) {
						calls.Add(1)
						if r.Body != nil {
							io.Copy(io.Discard, r.Body)
							r.Body.Close()
						}
						time.Sleep(20 * time.Millisecond)
						return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
					})
					tr := NewTransport(base, append(quietInternal(), WithIdempotencyKeys(DraftIdempotencyKey()),
						WithBackoff(ConstantBackoff(10*time.Millisecond)),
						WithStateCheck(func(ctx context.Context, c StateCheck) (StateResult, error) {
							checks.Add(1)
							return StateResult{State: state}, nil
						}))...)
					var wg sync.WaitGroup
					var unknown atomic.Int64
					for range inFlight {
						wg.Go(func() {
							var res Results
							req, _ := http.NewRequestWithContext(WithResults(t.Context(), &res), http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
							resp, err := tr.RoundTrip(req)
							if err == nil {
								resp.Body.Close()
							}
							last, _ := res.Last()
							if last.OutcomeUnknown != errors.Is(err, ErrOutcomeUnknown) {
								t.Errorf("Results.OutcomeUnknown %v, ErrOutcomeUnknown %v", last.OutcomeUnknown, errors.Is(err, ErrOutcomeUnknown))
							}
							if last.OutcomeUnknown {
								unknown.Add(1)
							}
						})
					}
					wg.Wait()
					t.Logf("%d writes: %d calls, %d checks, %d unknown", inFlight, calls.Load(), checks.Load(), unknown.Load())
					if extra := int(calls.Load()) - inFlight; extra > 2 {
						t.Errorf("%d calls for %d writes: %d resends, want at most 2", calls.Load(), inFlight, extra)
					}
				})
			})
		}
	}
}
