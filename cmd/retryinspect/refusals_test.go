// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// refusalSpans plays fn through the real transport on virtual time and
// returns its spans as the stdouttrace exporter writes them.
func refusalSpans(t *testing.T, fn func(t *testing.T, tel []otelretry.Option)) []byte {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tp := spanWriter(t, &out)
		fn(t, []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans()})
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return out.Bytes()
}

// The dependency headline gives "the retries the budget refused" (doc.go:
// "e.g. ... 14 budget_exhausted ...; the budget refused 14 retries") and
// the HTML overview marks "wherever the retry budget refused a retry
// (budget_exhausted)". The library now records two budget refusals away
// from an attempt's retry.decision:
//
//   - a retry whose pause met a Retry-After hold another operation brought
//     (docs/budget.md): the attempt keeps decision retry, the operation
//     ends budget_exhausted and its span carries attempt_abandoned with
//     retry.decision budget_exhausted, retry.reason pushback;
//   - the resend a state check's not_applied asked for, refused by the
//     budget: the state_check span carries retry.decision budget_exhausted.
//
// retryinspect counted only attempts that decided budget_exhausted, so the
// headline said nothing of these refusals and the HTML said "the budget
// refused no retry", next to an operation that ended budget_exhausted. An
// operation that ended budget_exhausted had one retry refused, wherever
// it is recorded (Operation.Refused).
func TestBudgetRefusalsTheLibraryRecordsAreCounted(t *testing.T) {
	cases := map[string][]byte{
		"pushback-during-pause": refusalSpans(t, func(t *testing.T, tel []otelretry.Option) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				if r.URL.Path == "/b" {
					h.Set("Retry-After", "10") // holds the host while /a pauses
				}
				return &http.Response{StatusCode: 503, Header: h, Body: http.NoBody, Request: r}, nil
			})
			rt := otelretry.NewTransport(base, append(tel, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second)),
				otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))...)
			var errOfA error
			var wg sync.WaitGroup
			for _, path := range []string{"/a", "/b"} {
				wg.Go(func() {
					if path == "/b" {
						time.Sleep(500 * time.Millisecond)
					}
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test"+path, nil)
					resp, err := rt.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					if path == "/a" {
						errOfA = err
					}
				})
			}
			wg.Wait()
			var e *otelretry.Error
			if !errors.As(errOfA, &e) || e.Reason != attrs.ReasonPushback {
				t.Fatalf("/a ended %v; the scenario wants budget_exhausted, reason pushback", errOfA)
			}
		}),
		"resend-after-state-check": refusalSpans(t, func(t *testing.T, tel []otelretry.Option) {
			// A layer below's own cancellation cuts the write: check_state.
			own := &url.Error{Op: "Post", URL: "http://api.test/orders", Err: context.Canceled}
			base := scripted.New(scripted.Step{Delay: 100 * time.Millisecond, Err: own}, scripted.Step{Status: 201})
			check := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}
			rt := otelretry.NewTransport(base, append(tel, otelretry.WithStateCheck(check),
				otelretry.WithBudget(&otelretry.Budget{Tokens: 2}))...) // no retry before a success
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
			_, err := rt.RoundTrip(req)
			var e *otelretry.Error
			if !errors.As(err, &e) || e.Outcome != attrs.OutcomeBudgetExhausted {
				t.Fatalf("ended %v; the scenario wants budget_exhausted", err)
			}
		}),
	}
	for name, spans := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runOnFile(t, spans)
			if code == exitError || !strings.Contains(out, "1 budget_exhausted") {
				t.Fatalf("the scenario did not play: exit %d, stderr %q\n%s", code, errOut, out)
			}
			headline := regexp.MustCompile(`(?m)^  api\.test: .*$`).FindString(out)
			if !strings.Contains(headline, "the budget refused 1 retry") {
				t.Errorf("headline %q: an operation the budget ended (budget_exhausted) counts no retry the budget refused", headline)
			}
			_, page, _ := runOnFile(t, spans, "-html", "-")
			if strings.Contains(page, "the budget refused no retry") {
				t.Errorf("the HTML overview says \"the budget refused no retry\" of a run where the budget refused one")
			}
		})
	}
}

// The headline gives "the throttle refused N of M requests": a first
// attempt never sent, or a retry. The library now also refuses, and counts
// on retry.throttled, the resend a state check's not_applied asked for
// (CHANGELOG: "count a resend the throttle refused after a state check"),
// recorded on the state_check span (retry.decision throttled) and the
// operation's outcome throttled, with its one attempt deciding check_state.
// retryinspect counted it nowhere: neither as refused nor as asked.
func TestAThrottledResendAfterAStateCheckIsCounted(t *testing.T) {
	refused, sent := 0, 0 // the requests the throttle refused, and those it let through
	spans := refusalSpans(t, func(t *testing.T, tel []otelretry.Option) {
		th := &otelretry.Throttle{}
		// Prime the throttle with refusals (not recorded: no tracer).
		prime := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}), otelretry.WithThrottle(th), otelretry.WithMaxAttempts(1))
		for range 30 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x", nil)
			if resp, err := prime.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		own := &url.Error{Op: "Post", URL: "http://api.test/orders", Err: context.Canceled}
		check := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		for range 200 {
			base := scripted.New(scripted.Step{Delay: 100 * time.Millisecond, Err: own}, scripted.Step{Status: 503})
			rt := otelretry.NewTransport(base, append(tel, otelretry.WithStateCheck(check), otelretry.WithThrottle(th))...)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
			_, err := rt.RoundTrip(req)
			sent += len(base.Calls())
			var e *otelretry.Error
			if errors.As(err, &e) && errors.Is(err, otelretry.ErrThrottled) {
				refused++ // a first attempt, or the resend after the state check
				if e.Attempts == 1 {
					return
				}
			}
		}
		t.Fatal("the throttle never refused a resend after a state check")
	})
	code, out, errOut := runOnFile(t, spans)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	asked := sent + refused
	headline := regexp.MustCompile(`(?m)^  api\.test: .*$`).FindString(out)
	want := "the throttle refused " + strconv.Itoa(refused) + " of " + strconv.Itoa(asked) + " requests"
	if !strings.Contains(headline, want) {
		t.Errorf("headline %q lacks %q: the resend the throttle refused after the state check is not counted\n%s", headline, want, out)
	}
}
