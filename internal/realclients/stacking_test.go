// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// otelretryDecides is a go-retryablehttp CheckRetry for a client whose
// transport is otelretry. otelretry has already retried, within its
// deadline, whatever was worth retrying, so the outer layer retries only an
// operation that otelretry ended because it ran out of attempts without a
// response (max_attempts), and never a write whose outcome is unknown, a
// response, an operation the retry budget stopped, or a canceled call.
func otelretryDecides(ctx context.Context, resp *http.Response, err error) (bool, error) {
	var oe *otelretry.Error
	if errors.As(err, &oe) {
		// otelretry's error says whether another try may help (its
		// attempts ran out, no write's outcome unknown, nothing the budget
		// or a throttle held back): keep it, also once the caller's
		// context is done.
		retry := oe.RetryableError() && ctx.Err() == nil
		return retry, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, nil
}

// outerSettings are go-retryablehttp configurations that do not multiply
// otelretry's attempts.
var outerSettings = []struct {
	name  string
	apply func(*retryablehttp.Client)
}{
	{
		// Retries off: one try, and the last response handed over as it is
		// (without PassthroughErrorHandler, go-retryablehttp turns a 503
		// into an error and discards the response).
		name: "retries_off",
		apply: func(c *retryablehttp.Client) {
			c.RetryMax = 0
			c.ErrorHandler = retryablehttp.PassthroughErrorHandler
		},
	},
	{
		name: "otelretry_decides",
		apply: func(c *retryablehttp.Client) {
			c.CheckRetry = otelretryDecides
			c.ErrorHandler = retryablehttp.PassthroughErrorHandler
		},
	},
}

// TestOuterLayerSettings shows the go-retryablehttp settings that leave the
// retrying to otelretry: a GET always answered 503 reaches the server 3
// times (otelretry's attempts), not 15, and the caller gets the 503; a POST
// that times out reaches it once, and the caller gets ErrOutcomeUnknown.
func TestOuterLayerSettings(t *testing.T) {
	for _, s := range outerSettings {
		t.Run(s.name+"/GET_503", func(t *testing.T) {
			tel := newTelemetry(t)
			srv := newServer(t, tel, statuses(http.StatusServiceUnavailable))
			client := outerLayer(tel.transport(t, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))))
			s.apply(client)

			resp, err := underParent.call(context.Background(), tel, client, http.MethodGet, srv.URL+"/items/42", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("status %d, want the 503 otelretry returned", resp.StatusCode)
			}
			spans := tel.finished(srv)
			if got := srv.received.Load(); got != 3 {
				t.Errorf("server received %d GETs, want 3", got)
			}
			ops := operations(t, spans)
			if len(ops) != 1 {
				t.Fatalf("%d operations, want 1", len(ops))
			}
			ops[0].check(t, spans, wantOp{method: http.MethodGet, outcome: attrs.OutcomeMaxAttempts, attempts: []wantAttempt{
				{status: 503, decision: attrs.DecisionRetry}, {status: 503, decision: attrs.DecisionRetry},
				{status: 503, decision: attrs.DecisionMaxAttempts}}})
		})
		t.Run(s.name+"/POST_timeout", func(t *testing.T) {
			tel := newTelemetry(t)
			srv := newServer(t, tel, hang)
			client := outerLayer(tel.transport(t, otelretry.WithDeadline(100*time.Millisecond)))
			s.apply(client)

			resp, err := underParent.call(context.Background(), tel, client, http.MethodPost, srv.URL+"/orders", []byte(`{"item":42}`))
			if resp != nil {
				resp.Body.Close()
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("error %v, want ErrOutcomeUnknown", err)
			}
			spans := tel.finished(srv)
			if got := srv.received.Load(); got != 1 {
				t.Errorf("server received %d POSTs, want 1", got)
			}
			ops := operations(t, spans)
			if len(ops) != 1 {
				t.Fatalf("%d operations, want 1", len(ops))
			}
			ops[0].check(t, spans, wantOp{method: http.MethodPost, outcome: attrs.OutcomeCheckState,
				attempts: []wantAttempt{{class: attrs.ErrorClassTimeout, decision: attrs.DecisionCheckState}}})
		})
	}
}

// reset drops the connection without an answer.
func reset(_ int, w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestOtelretryDecidesRetriesWhatOtelretryGaveUpOn: under otelretryDecides
// the outer layer still retries a GET whose connections all broke, once
// otelretry has run out of attempts, and stops as soon as otelretry's retry
// budget does. With the default budget: the first operation makes 3
// attempts (max_attempts), the outer layer repeats it, the second makes 1
// (budget_exhausted), and the outer layer stops: 4 requests at the server.
func TestOtelretryDecidesRetriesWhatOtelretryGaveUpOn(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, tel, reset)
	client := outerLayer(tel.transport(t, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))))
	client.CheckRetry = otelretryDecides
	client.ErrorHandler = retryablehttp.PassthroughErrorHandler

	resp, err := underParent.call(context.Background(), tel, client, http.MethodGet, srv.URL+"/items/42", nil)
	if resp != nil {
		resp.Body.Close()
	}
	if !errors.Is(err, otelretry.ErrBudgetExhausted) {
		t.Errorf("error %v, want ErrBudgetExhausted", err)
	}
	spans := tel.finished(srv)
	if got := srv.received.Load(); got != 4 {
		t.Errorf("server received %d GETs, want 4", got)
	}
	ops := operations(t, spans)
	if len(ops) != 2 {
		t.Fatalf("%d operations, want 2", len(ops))
	}
	broken := attrs.ErrorClassConnectionReset
	ops[0].check(t, spans, wantOp{method: http.MethodGet, outcome: attrs.OutcomeMaxAttempts, attempts: []wantAttempt{
		{class: broken, decision: attrs.DecisionRetry}, {class: broken, decision: attrs.DecisionRetry},
		{class: broken, decision: attrs.DecisionMaxAttempts}}})
	ops[1].check(t, spans, wantOp{method: http.MethodGet, outcome: attrs.OutcomeBudgetExhausted, repeat: 1,
		attempts: []wantAttempt{{class: broken, decision: attrs.DecisionBudgetExhausted}}})
}

// A write that hangs past the caller's deadline under go-retryablehttp with
// otelretryDecides: its error still matches ErrOutcomeUnknown (the
// context's error would hide it), and the server got the write once.
func TestOtelretryDecidesKeepsTheUnknownOutcome(t *testing.T) {
	for range 3 { // the caller's deadline and otelretry's race: each run must keep it
		tel := newTelemetry(t)
		srv := newServer(t, tel, hang)
		client := outerLayer(tel.transport(t, otelretry.WithAttemptTimeout(2*time.Second)))
		client.CheckRetry = otelretryDecides
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		resp, err := underParent.call(ctx, tel, client, http.MethodPost, srv.URL+"/orders", []byte(`{"order":1}`))
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("error %v, want ErrOutcomeUnknown", err)
		}
		tel.finished(srv)
		if got := srv.received.Load(); got != 1 {
			t.Errorf("server received %d POSTs, want 1", got)
		}
	}
}

// TestStackedDeadlines: a deadline on the caller's context is the one time
// limit go-retryablehttp and otelretry share. Each outer try is a new
// otelretry operation whose deadline is the earliest of its own
// (WithDeadline, 30s by default, restarted by every try: see
// TestRetryablehttpGET503) and the context's, so each later operation
// records less time (retry.deadline_ms) than the one before.
func TestStackedDeadlines(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, tel, statuses(http.StatusServiceUnavailable))
	client := outerLayer(tel.transport(t, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	if resp, err := underParent.call(ctx, tel, client, http.MethodGet, srv.URL+"/items/42", nil); err == nil || resp != nil {
		t.Fatalf("response %v, error %v; want go-retryablehttp's giving-up error", resp, err)
	}
	spans := tel.finished(srv)
	if got := srv.received.Load(); got != outerTries*3 {
		t.Errorf("server received %d GETs, want %d", got, outerTries*3)
	}
	ops := operations(t, spans)
	if len(ops) != outerTries {
		t.Fatalf("%d operations, want %d", len(ops), outerTries)
	}
	var prev int64 = 5000
	for k, o := range ops {
		d, _ := num(o.span, attrs.DeadlineMsKey)
		if d > prev || d <= 0 {
			t.Errorf("operation %d: %s=%d, want at most %d (the context's time left)", k+1, attrs.DeadlineMsKey, d, prev)
		}
		prev = d
	}
	if first, _ := num(ops[0].span, attrs.DeadlineMsKey); prev >= first {
		t.Errorf("the last operation records %s=%d, the first %d: want less time left", attrs.DeadlineMsKey, prev, first)
	}
}

// docs/layers.md: "Put the overall time limit on the caller's context:
// both layers honour it." A POST never answered, its time limit on the
// caller's context: sent once under either setting, ended
// deadline_exceeded, its unknown outcome on the result slot. With retries off, go-retryablehttp's DefaultRetryPolicy
// returns ctx.Err() once the context is done, in place of otelretry's
// error, as the page says; otelretryDecides keeps otelretry's error.
func TestRetryablehttpWriteUnderTheCallersDeadline(t *testing.T) {
	for _, s := range outerSettings {
		t.Run(s.name, func(t *testing.T) {
			tel := newTelemetry(t)
			srv := newServer(t, tel, hang)
			client := outerLayer(tel.transport(t))
			s.apply(client)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			var results otelretry.Results
			req, _ := retryablehttp.NewRequestWithContext(otelretry.WithResults(ctx, &results), http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":1}`))
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			last, _ := results.Last()
			if srv.received.Load() != 1 || !last.OutcomeUnknown || last.Outcome != attrs.OutcomeDeadlineExceeded {
				t.Fatalf("received %d, slot %+v; want 1 and the unknown write, deadline_exceeded", srv.received.Load(), last)
			}
			if keeps := s.name == "otelretry_decides"; errors.Is(err, otelretry.ErrOutcomeUnknown) != keeps || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err %v: ErrOutcomeUnknown %v, want %v (and context.DeadlineExceeded)", err, errors.Is(err, otelretry.ErrOutcomeUnknown), keeps)
			}
		})
	}
}
