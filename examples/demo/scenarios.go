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
	opts   func(env *environment) []otelretry.Option
	// want is the expected outcome, checked by the demo's test.
	want attrs.Outcome
}

// environment is what scenarios share: the server's address and the
// client used by state checks.
type environment struct {
	baseURL     string
	stateClient *http.Client
}

func scenarios() []scenario {
	fixed := func(deadline, attemptTimeout, backoff time.Duration, attempts int) []otelretry.Option {
		return []otelretry.Option{
			otelretry.WithDeadline(deadline), otelretry.WithAttemptTimeout(attemptTimeout),
			otelretry.WithBackoff(otelretry.ConstantBackoff(backoff)), otelretry.WithMaxAttempts(attempts),
		}
	}
	return []scenario{
		{name: "first-call success", method: http.MethodGet, path: "/ok?api_key=demo-secret-key", want: attrs.OutcomeReturn,
			opts: func(*environment) []otelretry.Option {
				return fixed(2*time.Second, time.Second, 40*time.Millisecond, 3)
			}},
		{name: "503, 503, 200", method: http.MethodGet, path: "/flaky", want: attrs.OutcomeReturn,
			opts: func(*environment) []otelretry.Option {
				return fixed(2*time.Second, time.Second, 40*time.Millisecond, 3)
			}},
		{name: "deadline exhausted", method: http.MethodGet, path: "/unavailable", want: attrs.OutcomeDeadlineExceeded,
			opts: func(*environment) []otelretry.Option {
				return fixed(250*time.Millisecond, time.Second, 100*time.Millisecond, 5)
			}},
		{name: "GET timeout to max_attempts", method: http.MethodGet, path: "/slow", want: attrs.OutcomeMaxAttempts,
			opts: func(*environment) []otelretry.Option {
				return fixed(2*time.Second, 100*time.Millisecond, 20*time.Millisecond, 3)
			}},
		{name: "POST timeout to check_state", method: http.MethodPost, path: "/orders/apply-then-stall", body: `{"sku":"A-1"}`, want: attrs.OutcomeCheckState,
			opts: func(*environment) []otelretry.Option {
				return fixed(2*time.Second, 150*time.Millisecond, 20*time.Millisecond, 3)
			}},
		{name: "Retry-After longer than the budget", method: http.MethodGet, path: "/busy", want: attrs.OutcomeDeadlineExceeded,
			opts: func(*environment) []otelretry.Option {
				return fixed(2*time.Second, time.Second, 40*time.Millisecond, 3)
			}},
		{name: "state check: applied", method: http.MethodPost, path: "/orders/apply-then-stall", body: `{"sku":"B-2"}`, want: attrs.OutcomeReturn,
			opts: func(env *environment) []otelretry.Option {
				return append(fixed(2*time.Second, 150*time.Millisecond, 20*time.Millisecond, 3), otelretry.WithStateCheck(env.checkOrder))
			}},
		{name: "state check: not applied, resent", method: http.MethodPost, path: "/orders/lost-first", body: `{"sku":"C-3"}`, want: attrs.OutcomeReturn,
			opts: func(env *environment) []otelretry.Option {
				return append(fixed(2*time.Second, 150*time.Millisecond, 20*time.Millisecond, 3), otelretry.WithStateCheck(env.checkOrder))
			}},
		{name: "retry budget exhausted", method: http.MethodGet, path: "/fail-fast", want: attrs.OutcomeBudgetExhausted,
			opts: func(*environment) []otelretry.Option {
				// A budget with no floor: one first attempt funds a tenth
				// of a retry, so the retry is refused.
				return append(fixed(2*time.Second, time.Second, 20*time.Millisecond, 3),
					otelretry.WithBudget(otelretry.NewBudget(otelretry.BudgetMinRetries(0))))
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
