// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// tuple is what the hooks tests compare per attempt event: what came
// back, what the client chose, and why.
func tuples(t *testing.T, h *harness) []string {
	t.Helper()
	var out []string
	for _, s := range h.attempts() {
		e := readEvent(t, s)
		got := strconv.FormatInt(e.Status, 10)
		if e.ErrorClass != "" {
			got = e.ErrorClass
		}
		out = append(out, got+" "+e.Decision+" "+attrOf(s, attrs.ReasonKey).AsString())
	}
	return out
}

func sameTuples(t *testing.T, h *harness, want ...string) {
	t.Helper()
	if got := tuples(t, h); strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("attempt events:\n got %q\nwant %q", got, want)
	}
}

var seedLike = []otelretry.Option{otelretry.WithDeadline(400 * time.Millisecond),
	otelretry.WithBackoff(otelretry.ConstantBackoff(40 * time.Millisecond)), otelretry.WithoutBudget()}

// A read-only POST (a Prometheus query, a search) marked repeatable is
// retried like a GET, and a timed-out one is resent instead of ending
// check_state; the operation records the caller's word.
func TestIntentRepeatable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}, {Status: 200}},
			append(seedLike, otelretry.WithAttemptTimeout(100*time.Millisecond))...)
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
		resp, err := h.client.Do(post(t, ctx, "http://prometheus.test/api/v1/query", "query=up"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sameTuples(t, h, "503 retry retryable_status", "timeout retry retryable_error", "200 return response")
		if !attrOf(h.operation(t), attrs.IdempotencyContractKey).AsBool() {
			t.Errorf("the operation does not record the caller's word (retry.idempotency_contract)")
		}
	})
	// A GET needs no word: Intent.Repeatable's godoc says the contract is
	// recorded for a method that is not safe only.
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}}, seedLike...)
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
		resp, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, ok := spantestAttr(h.operation(t), attrs.IdempotencyContractKey); ok {
			t.Errorf("a GET marked Repeatable records retry.idempotency_contract")
		}
	})
}

func TestIntentNoRetryAndLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, seedLike...)
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{NoRetry: true})
		resp, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sameTuples(t, h, "503 stop intent")
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, seedLike...)
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{MaxAttempts: 5, Deadline: time.Hour})
		resp, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sameTuples(t, h, "503 retry retryable_status", "503 retry retryable_status", "503 retry retryable_status",
			"503 retry retryable_status", "503 max_attempts attempt_limit")
		if got := attrOf(h.operation(t), attrs.DeadlineMsKey).AsInt64(); got != time.Hour.Milliseconds() {
			t.Errorf("retry.deadline_ms = %d, want the request's hour", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// The caller's context deadline still wins over a longer intent.
		h := newHarness(t, []scripted.Step{{Status: 503}}, seedLike...)
		ctx, cancel := contextWithTimeout(t, 100*time.Millisecond)
		defer cancel()
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{Deadline: time.Hour})
		resp, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := attrOf(h.operation(t), attrs.DeadlineMsKey).AsInt64(); got != 100 {
			t.Errorf("retry.deadline_ms = %d, want the context's 100", got)
		}
	})
}

func TestClassifier(t *testing.T) {
	t.Run("retry a 500 the policy would not", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var seen []otelretry.Answer
			classify := func(a otelretry.Answer) otelretry.Classification {
				seen = append(seen, a)
				if a.StatusCode == 500 && a.Header.Get("X-Transient") == "1" {
					return otelretry.Retryable(90 * time.Millisecond)
				}
				return otelretry.Classification{}
			}
			h := newHarness(t, []scripted.Step{{Status: 500, Header: http.Header{"X-Transient": {"1"}}}, {Status: 200}},
				append(seedLike, otelretry.WithClassifier(classify))...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, "500 retry classifier", "200 return response")
			if ev := h.events(t); ev[0].BackoffMs != 90 {
				t.Errorf("pause = %dms, want the classifier's 90", ev[0].BackoffMs)
			}
			if len(seen) != 2 || seen[0].Attempt != 1 || seen[0].Request == nil || seen[1].StatusCode != 200 {
				t.Errorf("classifier saw %+v", seen)
			}
		})
	})
	t.Run("cannot make a write repeatable or resend an unknown write", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			always := func(otelretry.Answer) otelretry.Classification { return otelretry.Retryable(0) }
			h := newHarness(t, []scripted.Step{{Status: 500}, {Hang: true}},
				append(seedLike, otelretry.WithClassifier(always), otelretry.WithAttemptTimeout(50*time.Millisecond))...)
			for range 2 {
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "x"))
				if resp != nil {
					resp.Body.Close()
				}
				_ = err
			}
			sameTuples(t, h, "500 stop not_idempotent", "timeout check_state unknown_write")
		})
	})
	t.Run("not retryable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			never := func(otelretry.Answer) otelretry.Classification { return otelretry.NotRetryable() }
			h := newHarness(t, []scripted.Step{{Status: 503}}, append(seedLike, otelretry.WithClassifier(never))...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, "503 stop classifier")
		})
	})
	t.Run("several are asked in order, the first answer that is not the zero one wins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var asked []string
			named := func(name string, c otelretry.Classification) otelretry.Classifier {
				return func(otelretry.Answer) otelretry.Classification { asked = append(asked, name); return c }
			}
			replaced := named("replaced", otelretry.NotRetryable())
			h := newHarness(t, []scripted.Step{{Status: 500}, {Status: 200}}, append(seedLike,
				otelretry.WithClassifier(replaced),
				otelretry.WithClassifier(named("zero", otelretry.Classification{}), nil,
					named("retry", otelretry.Retryable(0)), named("never", otelretry.NotRetryable())))...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, "500 retry classifier", "200 return response")
			if want := []string{"zero", "retry", "zero", "retry"}; !slices.Equal(asked, want) {
				t.Errorf("asked %v, want %v: in order, until an answer, and never the replaced one", asked, want)
			}
		})
	})
	t.Run("not processed resends a write, within the limits, with the evidence", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			errRejected := errors.New("stream rejected by the peer")
			evidence := func(a otelretry.Answer) otelretry.Classification {
				if errors.Is(a.Err, errRejected) {
					return otelretry.NotProcessed(otelretry.Evidence{Protocol: "h3", Code: 0x10b, Name: "H3_REQUEST_REJECTED"})
				}
				return otelretry.Classification{}
			}
			h := newHarness(t, []scripted.Step{{Err: errRejected}, {Status: 201}}, append(seedLike, otelretry.WithClassifier(evidence))...)
			resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "x"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, "refused_stream retry classifier", "201 return response")
			first := h.attempts()[0]
			if attrOf(first, attrs.EvidenceProtocolKey).AsString() != "h3" || attrOf(first, attrs.EvidenceCodeKey).AsInt64() != 0x10b ||
				attrOf(first, attrs.EvidenceNameKey).AsString() != "H3_REQUEST_REJECTED" {
				t.Errorf("evidence not recorded: %v", first.Attributes())
			}
			if len(h.base.Calls()) != 2 {
				t.Errorf("calls = %d, want 2", len(h.base.Calls()))
			}
		})
	})
}

func TestPrepareAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prepare := func(r *http.Request, attempt int) error {
			r.Header.Set("Authorization", "Bearer token-"+strconv.Itoa(attempt))
			r.Header.Set("X-Attempt", strconv.Itoa(attempt))
			return nil
		}
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, append(seedLike, otelretry.WithPrepareAttempt(prepare))...)
		req := get(t, t.Context(), "http://api.test/")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for i, c := range h.base.Calls() {
			if got, want := c.Header.Get("Authorization"), "Bearer token-"+strconv.Itoa(i+1); got != want {
				t.Errorf("attempt %d: Authorization %q, want %q", i+1, got, want)
			}
		}
		if len(req.Header) != 0 {
			t.Errorf("the caller's request was modified: %v", req.Header)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		errSign := errors.New("signing key unavailable")
		fail := func(r *http.Request, attempt int) error {
			if attempt == 2 {
				return errSign
			}
			return nil
		}
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, append(seedLike, otelretry.WithPrepareAttempt(fail), otelretry.WithIdempotentMethods("PUT"))...)
		bodies := &countedBodies{getBodyOK: -1}
		_, err := h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
		var e *otelretry.Error
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeStop || e.Reason != attrs.ReasonPrepareFailed || !errors.Is(err, errSign) {
			t.Fatalf("err = %v, want stop (prepare_failed) wrapping the hook's error", err)
		}
		if len(h.base.Calls()) != 1 {
			t.Errorf("calls = %d, want 1: a failed preparation sends nothing", len(h.base.Calls()))
		}
		bodies.check(t)
	})
}

// A backoff that sees the answer can honour a service's own hint.
func TestBackoffHonoursRateLimitReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fromReset := otelretry.Backoff(func(retry int, a otelretry.Answer) time.Duration {
			if secs, err := strconv.Atoi(a.Header.Get("X-RateLimit-Reset")); err == nil {
				return time.Duration(secs) * 100 * time.Millisecond // this API counts in tenths
			}
			return 10 * time.Millisecond
		})
		h := newHarness(t, []scripted.Step{{Status: 429, Header: http.Header{"X-Ratelimit-Reset": {"2"}}}, {Status: 200}},
			otelretry.WithBackoff(fromReset), otelretry.WithoutBudget())
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ev := h.events(t); ev[0].BackoffMs != 200 {
			t.Fatalf("pause = %dms, want the header's 200", ev[0].BackoffMs)
		}
	})
}

func TestDecorrelatedJitterGrowsFromThePreviousPause(t *testing.T) {
	b := otelretry.DecorrelatedJitter(10*time.Millisecond, 100*time.Millisecond)
	for range 1000 {
		for _, prev := range []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, time.Second} {
			d := b(2, otelretry.Answer{PreviousPause: prev})
			hi := min(3*max(prev, 10*time.Millisecond), 100*time.Millisecond)
			if d < 10*time.Millisecond || d > hi {
				t.Fatalf("after %v: pause %v outside [10ms, %v]", prev, d, hi)
			}
		}
	}
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

// A POST marked Intent.Repeatable (a search, a query) is a read by the
// caller's word: when it ends without an answer, its error does not claim
// a write's unknown outcome. A write under an idempotency-key contract
// still does.
func TestIntentRepeatableIsNotAnUnknownWrite(t *testing.T) {
	for name, tc := range map[string]struct {
		mark        func(*http.Request) *http.Request
		opts        []otelretry.Option
		wantUnknown bool
	}{
		"Intent.Repeatable": {
			mark: func(r *http.Request) *http.Request {
				return r.WithContext(otelretry.WithIntent(r.Context(), otelretry.Intent{Repeatable: true}))
			},
		},
		"idempotency-key contract": {
			mark: func(r *http.Request) *http.Request { r.Header.Set("Idempotency-Key", "k-1"); return r },
			opts: []otelretry.Option{otelretry.WithIdempotencyKeyContract()}, wantUnknown: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Hang: true}}, append([]otelretry.Option{
					otelretry.WithAttemptTimeout(50 * time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))},
					tc.opts...)...)
				_, err := h.transprt.RoundTrip(tc.mark(post(t, t.Context(), "http://api.test/_search", `{"q":1}`)))
				if !errors.Is(err, otelretry.ErrMaxAttempts) {
					t.Fatalf("err = %v, want max_attempts", err)
				}
				if got := errors.Is(err, otelretry.ErrOutcomeUnknown); got != tc.wantUnknown {
					t.Errorf("errors.Is(err, ErrOutcomeUnknown) = %v, want %v", got, tc.wantUnknown)
				}
			})
		})
	}
}
