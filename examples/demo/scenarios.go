// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// scenario is one negative path of the retry contract.
type scenario struct {
	name   string
	method string
	path   string
	body   string
	limits limits
	// extra adds options beyond the limits (a state check, a budget,
	// hedging).
	extra func(env *environment) []otelretry.Option
	// want is the expected outcome, checked by the demo's test.
	want attrs.Outcome
}

// limits are the retry bounds of a scenario.
type limits struct {
	deadline, attemptTimeout, backoff time.Duration
	attempts                          int
}

func (l limits) options() []otelretry.Option {
	return []otelretry.Option{
		otelretry.WithDeadline(l.deadline), otelretry.WithAttemptTimeout(l.attemptTimeout),
		otelretry.WithBackoff(otelretry.ConstantBackoff(l.backoff)), otelretry.WithMaxAttempts(l.attempts),
	}
}

func (sc scenario) options(env *environment) []otelretry.Option {
	opts := sc.limits.options()
	if sc.extra != nil {
		opts = append(opts, sc.extra(env)...)
	}
	return opts
}

// environment is what scenarios share: the server's address and the
// client used by state checks.
type environment struct {
	baseURL     string
	stateClient *http.Client
}

func scenarios() []scenario {
	const ms = time.Millisecond
	reads := limits{deadline: 2 * time.Second, attemptTimeout: time.Second, backoff: 40 * ms, attempts: 3}
	writes := limits{deadline: 2 * time.Second, attemptTimeout: 150 * ms, backoff: 20 * ms, attempts: 3}
	withStateCheck := func(env *environment) []otelretry.Option {
		return []otelretry.Option{otelretry.WithStateCheck(env.checkOrder)}
	}
	return []scenario{
		{name: "first-call success", method: http.MethodGet, path: "/ok?api_key=demo-secret-key", limits: reads, want: attrs.OutcomeReturn},
		{name: "503, 503, 200", method: http.MethodGet, path: "/flaky", limits: reads, want: attrs.OutcomeReturn},
		{name: "deadline exhausted", method: http.MethodGet, path: "/unavailable", want: attrs.OutcomeDeadlineExceeded,
			// 503 after 60ms, pause 100ms, 503 after 60ms: 80ms are left,
			// less than the next pause.
			limits: limits{deadline: 300 * ms, attemptTimeout: time.Second, backoff: 100 * ms, attempts: 5}},
		{name: "GET timeout to max_attempts", method: http.MethodGet, path: "/slow", want: attrs.OutcomeMaxAttempts,
			limits: limits{deadline: 2 * time.Second, attemptTimeout: 100 * ms, backoff: 20 * ms, attempts: 3}},
		// The attempt timeout does not cut a write it could not retry (no
		// state check here): the operation's deadline does.
		{name: "POST timeout to check_state", method: http.MethodPost, path: "/orders/apply-then-stall", body: `{"sku":"A-1"}`,
			limits: limits{deadline: 400 * ms, attemptTimeout: 150 * ms, backoff: 20 * ms, attempts: 3}, want: attrs.OutcomeCheckState},
		{name: "Retry-After longer than the deadline", method: http.MethodGet, path: "/busy", limits: reads, want: attrs.OutcomeDeadlineExceeded},
		{name: "state check: applied", method: http.MethodPost, path: "/orders/apply-then-stall", body: `{"sku":"B-2"}`,
			limits: writes, extra: withStateCheck, want: attrs.OutcomeReturn},
		{name: "state check: not applied, resent", method: http.MethodPost, path: "/orders/lost-first", body: `{"sku":"C-3"}`,
			limits: writes, extra: withStateCheck, want: attrs.OutcomeReturn},
		{name: "retry budget exhausted", method: http.MethodGet, path: "/fail-fast", limits: reads, want: attrs.OutcomeBudgetExhausted,
			// Two tokens: the first failure leaves one, not above half, so
			// the retry is refused.
			extra: func(*environment) []otelretry.Option {
				return []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Tokens: 2})}
			}},
		// The first request stalls; the hedge sent after 50 ms without an
		// answer gets one at once, and the stalled attempt is canceled.
		{name: "slow read, hedged", method: http.MethodGet, path: "/stall-first", limits: reads, want: attrs.OutcomeReturn,
			extra: func(*environment) []otelretry.Option {
				return []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 50 * ms})}
			}},
	}
}

// checkOrder is the state check: it asks the server whether the order with
// the operation's key exists. Its call goes through an instrumented client,
// so it appears under the state_check span.
func (env *environment) checkOrder(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.baseURL+"/orders/state/"+url.PathEscape(c.OperationID), nil)
	if err != nil {
		return otelretry.StateResult{}, err
	}
	resp, err := env.stateClient.Do(req)
	if err != nil {
		return otelretry.StateResult{}, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
	case http.StatusNotFound:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateNotApplied}, nil
	default:
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
}
