// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

func stored(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
}

func TestStateCheckResolvesAnUnknownWrite(t *testing.T) {
	cases := []struct {
		name        string
		result      otelretry.StateResult
		hookErr     error
		wantCalls   int
		wantStatus  int // 0: want an error
		wantOutcome string
		wantResult  string
	}{
		{"applied returns the stored result", otelretry.StateResult{State: attrs.StateApplied, Response: stored(201, "order 1")}, nil, 1, 201, "return", "applied"},
		{"not applied resends the write", otelretry.StateResult{State: attrs.StateNotApplied}, nil, 2, 202, "return", "not_applied"},
		{"unknown keeps check_state", otelretry.StateResult{State: attrs.StateUnknown}, nil, 1, 0, "check_state", "unknown"},
		{"hook error keeps check_state", otelretry.StateResult{}, errors.New("state store down"), 1, 0, "check_state", "unknown"},
		{"applied without a response is not invented", otelretry.StateResult{State: attrs.StateApplied}, nil, 1, 0, "check_state", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var seen otelretry.StateCheck
				hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					seen = c
					if _, ok := ctx.Deadline(); !ok {
						t.Error("state check context has no deadline")
					}
					return tc.result, tc.hookErr
				}
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 202}},
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithStateCheck(hook))
				ctx := otelretry.WithOperationID(t.Context(), "op-9")
				resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "order"))
				if tc.wantStatus == 0 {
					if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
					}
				} else {
					if err != nil || resp.StatusCode != tc.wantStatus {
						t.Fatalf("got %v, %v; want status %d", resp, err, tc.wantStatus)
					}
					resp.Body.Close()
				}
				if n := len(h.base.Calls()); n != tc.wantCalls {
					t.Fatalf("calls = %d, want %d", n, tc.wantCalls)
				}
				if seen.OperationID != "op-9" || seen.Attempt != 1 || seen.Request.Method != "POST" || seen.Err == nil {
					t.Errorf("hook saw %+v", seen)
				}
				op := h.operation(t)
				if got := attrOf(op, attrs.OutcomeKey).AsString(); got != tc.wantOutcome {
					t.Errorf("outcome = %s, want %s", got, tc.wantOutcome)
				}
				checks := spantest.Named(h.ended(), attrs.StateCheckSpanName)
				if len(checks) != 1 || checks[0].Parent().SpanID() != op.SpanContext().SpanID() {
					t.Fatalf("want one state_check span under the operation span, got %d", len(checks))
				}
				if got := attrOf(checks[0], attrs.StateCheckResultKey).AsString(); got != tc.wantResult {
					t.Errorf("state check result = %s, want %s", got, tc.wantResult)
				}
				if got := h.events(t)[0].Decision; got != "check_state" {
					t.Errorf("first attempt decision = %s, want check_state", got)
				}
			})
		})
	}
}

func TestIdempotencyKeyRetriesOnlyUnderTheContract(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		t.Run(map[bool]string{false: "without", true: "with"}[optIn], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}
				if optIn {
					opts = append(opts, otelretry.WithIdempotencyKeyContract())
				}
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}}, opts...)
				req := post(t, t.Context(), "http://api.test/payments", "pay")
				req.Header.Set("Idempotency-Key", "8e03978e-40d5-43e8-bc93-6894a57f9324")
				resp, err := h.client.Do(req)
				calls := h.base.Calls()
				_, contract := spantest.Attr(h.operation(t), attrs.IdempotencyContractKey)
				if !optIn {
					if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(calls) != 1 || contract {
						t.Fatalf("without the contract: err=%v calls=%d contract=%v; want check_state after 1 call", err, len(calls), contract)
					}
					return
				}
				if err != nil || resp.StatusCode != 201 || len(calls) != 2 || !contract {
					t.Fatalf("with the contract: err=%v calls=%d contract=%v; want 201 after 2 calls", err, len(calls), contract)
				}
				resp.Body.Close()
				if calls[1].Header.Get("Idempotency-Key") != calls[0].Header.Get("Idempotency-Key") {
					t.Fatal("the resend changed the idempotency key")
				}
			})
		})
	}
}

func TestDeclaredIdempotentMethodRetriesAndRecordsTheContract(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 204}},
			otelretry.WithIdempotentMethods(http.MethodPut, http.MethodGet),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/items/1", strings.NewReader("v"))
		resp, err := h.client.Do(req)
		if err != nil || resp.StatusCode != 204 || len(h.base.Calls()) != 2 {
			t.Fatalf("PUT: %v %v after %d calls, want 204 after 2", resp, err, len(h.base.Calls()))
		}
		resp.Body.Close()
		if v, ok := spantest.Attr(h.operation(t), attrs.IdempotencyContractKey); !ok || !v.AsBool() {
			t.Fatal("a PUT declared idempotent must record the contract")
		}
	})
}

// A state check's lookup made through the same client is an operation of
// its own: it is not counted as a repeat of the write, and the write's
// attempts keep their numbering (1, 2).
func TestStateCheckLookupIsItsOwnOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/orders/by-key/"+c.OperationID, nil)
			resp, err := h.client.Do(req)
			if err != nil {
				return otelretry.StateResult{}, err
			}
			resp.Body.Close()
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 404}, {Status: 201}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithStateCheck(hook))
		ctx := otelretry.WithOperationID(t.Context(), "op-write")
		resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "order"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var writeAttempts []int64
		for _, s := range h.attempts() {
			if attrOf(s, attrs.OperationIDKey).AsString() == "op-write" {
				writeAttempts = append(writeAttempts, attrOf(s, attrs.AttemptKey).AsInt64())
			}
		}
		if len(writeAttempts) != 2 || writeAttempts[0] != 1 || writeAttempts[1] != 2 {
			t.Errorf("the write's attempts are numbered %v, want [1 2]", writeAttempts)
		}
		for _, op := range spantest.Operations(h.ended()) {
			if v, ok := spantest.Attr(op, attrs.RepeatKey); ok {
				t.Errorf("operation %s carries retry.operation.repeat=%d: the lookup is not a repeat of the write",
					attrOf(op, attrs.OperationIDKey).AsString(), v.AsInt64())
			}
		}
	})
}

// A state check's error is recorded, sanitized, on the state_check span,
// and reachable from the returned error.
func TestStateCheckErrorIsRecordedAndReachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookupErr := errors.New("orders DB unreachable at http://admin:hunter2@db.internal/q?token=tok-77")
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{}, lookupErr
			}))
		_, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
		}
		if !errors.Is(err, lookupErr) {
			t.Errorf("err = %v: the state check's error is not reachable with errors.Is", err)
		}
		var found bool
		for _, s := range h.ended() {
			if s.Name() != attrs.StateCheckSpanName {
				continue
			}
			text := s.Status().Description
			for _, e := range s.Events() {
				for _, kv := range e.Attributes {
					text += " " + kv.Value.Emit()
				}
			}
			found = strings.Contains(text, "orders DB unreachable")
			if strings.Contains(text, "hunter2") || strings.Contains(text, "tok-77") {
				t.Errorf("the state_check span carries a secret: %s", text)
			}
		}
		if !found {
			t.Errorf("the state check's error is on no state_check span")
		}
	})
}

// A state check's bad answers are held to the rules: applied without a
// response stays unknown (no response invented); applied with a nil Body
// is returned with http.NoBody; not_applied after blocking past the
// deadline gets no resend (deadline_exceeded, known not applied); a panic
// is not hidden and leaves no span open.
func TestStateCheckBadAnswersAreHeldToTheRules(t *testing.T) {
	steps := []scripted.Step{{Hang: true}, {Status: 201}}
	opts := func(f func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error)) []otelretry.Option {
		return []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithDeadline(time.Second),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithStateCheck(f)}
	}
	t.Run("applied-nil-response", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateApplied}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if resp != nil || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("got %v, %v; want ErrOutcomeUnknown", resp, err)
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	})
	t.Run("applied-nil-body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 200, Header: http.Header{}}}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if err != nil || resp.Body == nil {
				t.Fatalf("got %v, %v; want the stored response with a body", resp, err)
			}
			if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
				t.Errorf("read %q, %v", b, err)
			}
			resp.Body.Close()
		})
	})
	t.Run("blocks-past-deadline-not-applied", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				time.Sleep(5 * time.Second) // ignores its context
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if resp != nil {
				resp.Body.Close()
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("%d calls, want 1: no resend after the deadline", n)
			}
			var rerr *otelretry.Error
			if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeDeadlineExceeded || errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("got %v; want deadline_exceeded, known not applied", err)
			}
		})
	})
	t.Run("panics", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				panic("state check boom")
			})...)
			func() {
				defer func() {
					if recover() == nil {
						t.Error("the state check's panic was swallowed")
					}
				}()
				h.transprt.RoundTrip(postReq(t, t.Context()))
			}()
			if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended {
				t.Errorf("%d spans started, %d ended", started, ended)
			}
		})
	})
}

// A write a state check says was not applied is sent again within the
// attempt limit and the budget of a retry: a hook that always says
// not_applied (a lie when the write was applied) gets at most the attempt
// limit of calls, and with a budget no more than the budget allows.
func TestStateCheckNotAppliedResendsWithinTheAttemptLimitAndTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		checks := 0
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithMaxAttempts(4), otelretry.WithoutBudget(),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				checks++
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		_, err := h.client.Do(postReq(t, t.Context()))
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeMaxAttempts {
			t.Errorf("got %v; want max_attempts", err)
		}
		if n := len(h.base.Calls()); n != 4 || checks != 4 {
			t.Errorf("%d calls, %d checks; want 4 and 4", n, checks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		budget := &otelretry.Budget{}
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithMaxAttempts(10), otelretry.WithBudget(budget),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		_, err := h.client.Do(postReq(t, t.Context()))
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeBudgetExhausted {
			t.Errorf("got %v; want budget_exhausted", err)
		}
		// A resend costs two tokens, its write's failure and its own (see
		// TestStateCheckResendsTakeTheirOwnTokens): the 3 a fresh host holds
		// above half pay for one.
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("%d calls; want 2", n)
		}
	})
}

// A lookup that the state check makes through the same otelretry client
// is an operation of its own (its own id, never counted as a repeat of
// the write), and the write's attempts keep their numbers, also under
// WithOperationID and an Intent on the write's context.
func TestStateCheckLookupThroughTheSameClientKeepsTheWritesNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		var lookupID string
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				resp, err := h.client.Do(get(t, ctx, "http://api.test/orders/by-key/"+c.OperationID))
				if err != nil {
					return otelretry.StateResult{}, err
				}
				resp.Body.Close()
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		ctx := otelretry.WithOperationID(t.Context(), "write-1")
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{MaxAttempts: 2})
		resp, err := h.client.Do(postReq(t, ctx))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var writeAttempts []int64
		for _, s := range h.attempts() {
			id := attrOf(s, attrs.OperationIDKey).AsString()
			if id == "write-1" {
				writeAttempts = append(writeAttempts, attrOf(s, attrs.AttemptKey).AsInt64())
			} else {
				lookupID = id
				if n := attrOf(s, attrs.AttemptKey).AsInt64(); n != 1 {
					t.Errorf("lookup attempt numbered %d, want 1", n)
				}
			}
		}
		if lookupID == "" || len(writeAttempts) != 2 || writeAttempts[0] != 1 || writeAttempts[1] != 2 {
			t.Errorf("lookup id %q, write attempts %v; want a lookup of its own and write attempts [1 2]", lookupID, writeAttempts)
		}
		for _, s := range spantest.Operations(h.ended()) {
			if _, ok := spantest.Attr(s, attrs.RepeatKey); ok {
				t.Errorf("operation %s records a repeat", attrOf(s, attrs.OperationIDKey).Emit())
			}
		}
	})
}

// A state check's lookup through the same client, on loopback, is an
// operation of its own that honours what the hook gave it: under its own
// Intent{NoRetry: true}, WithOperationID and result slot, a lookup
// answered 503 is executed exactly once, under that id, and its slot gets
// its result; the caller's slot gets the write's alone, unknown.
func TestStateCheckLookupHonoursItsOwnIntentIDAndSlot(t *testing.T) {
	var writes, lookups atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			writes.Add(1)
			select { // executed, never answered: the attempt timeout cuts it
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		lookups.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	defer close(stop)
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	var client *http.Client
	var lookup otelretry.Results
	var lookupErr error
	check := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{NoRetry: true})
		ctx = otelretry.WithResults(otelretry.WithOperationID(ctx, "lookup-of-order-9"), &lookup)
		resp, err := client.Do(get(t, ctx, srv.URL+"/orders/9"))
		if err != nil {
			lookupErr = err
			return otelretry.StateResult{}, err
		}
		resp.Body.Close()
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(5*time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget(),
		otelretry.WithStateCheck(check))}
	var caller otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "write-order-9"), &caller)
	_, err := client.Do(post(t, ctx, srv.URL+"/orders", "order 9"))
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || lookupErr != nil {
		t.Fatalf("err = %v, the lookup's %v; want an unknown write, and the lookup's 503", err, lookupErr)
	}
	if w, l := writes.Load(), lookups.Load(); w != 1 || l != 1 {
		t.Errorf("executed %d writes and %d lookups, want 1 and 1: the lookup's NoRetry", w, l)
	}
	if ops := lookup.Operations(); len(ops) != 1 || ops[0].OperationID != "lookup-of-order-9" || ops[0].StatusCode != 503 ||
		ops[0].Outcome != attrs.OutcomeStop || ops[0].Reason != attrs.ReasonIntent || ops[0].Attempts != 1 {
		t.Errorf("the lookup's slot holds %+v, want its one attempt, stop/intent, 503, under lookup-of-order-9", ops)
	}
	if ops := caller.Operations(); len(ops) != 1 || ops[0].OperationID != "write-order-9" || !ops[0].OutcomeUnknown {
		t.Errorf("the caller's slot holds %+v, want the unknown write alone", ops)
	}
	for _, a := range spantest.Attempts(rec.Ended()) {
		id, method := attrOf(a, attrs.OperationIDKey).AsString(), attrOf(a, attrs.HTTPRequestMethodKey).AsString()
		if want := map[string]string{http.MethodGet: "lookup-of-order-9", http.MethodPost: "write-order-9"}[method]; id != want {
			t.Errorf("a %s attempt is recorded under %q, want %q", method, id, want)
		}
	}
}

// A state check's error is recorded sanitized and stays reachable: a hook
// error naming its lookup URL (a *url.Error and free text) and a database
// DSN, each with credentials and query tokens, shows none of them in the
// returned error's message or in any span's status, events or attributes;
// errors.As still reaches the original.
func TestStateCheckErrorIsSanitizedAndReachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		secrets := []string{"hunter2", "LOOKUPSECRET", "dbpass", "DBPW", "WRITESIG", "wpass", "FREETEXT"}
		lookupErr := &url.Error{Op: "Get", URL: "https://admin:hunter2@records.test/find?token=LOOKUPSECRET", Err: io.ErrUnexpectedEOF}
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{}, fmt.Errorf("lookup of %s via 'https://svc.test/x?k=FREETEXT' failed (db postgres://dbuser:dbpass@db.test:5432/x?password=DBPW): %w",
					c.Request.URL, lookupErr)
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://writer:wpass@api.test/orders?sig=WRITESIG", strings.NewReader("x"))
		_, err := h.transprt.RoundTrip(req) // http.Client would wrap it in its own unsanitized *url.Error
		var ue *url.Error
		if !errors.As(err, &ue) || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("got %v; want ErrOutcomeUnknown reaching the hook's *url.Error", err)
		}
		check := func(where, text string) {
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s carries %q: %s", where, s, text)
				}
			}
		}
		check("error", err.Error())
		for _, s := range h.spans.Ended() {
			check(s.Name()+" status", s.Status().Description)
			for _, kv := range s.Attributes() {
				check(s.Name()+" "+string(kv.Key), kv.Value.Emit())
			}
			for _, e := range s.Events() {
				for _, kv := range e.Attributes {
					check(s.Name()+" event "+e.Name+" "+string(kv.Key), kv.Value.Emit())
				}
			}
		}
	})
}

// The state check's Request carries no body of the caller's: a hook that
// closes it (defer check.Request.Body.Close(), a Go habit) does not close
// the caller's body a second time.
func TestStateCheckClosingItsRequestBodyLeavesTheCallersAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				if c.Request.Body != nil {
					defer c.Request.Body.Close()
				}
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}))
		bodies := &countedBodies{getBodyOK: -1}
		_, err := h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPost, true))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want unknown", err)
		}
		bodies.check(t)
	})
}

// A write whose unknown outcome the state check resolves as applied with a
// stored redirect (a 303 See Other: POST, redirect, GET) starts the chain
// http.Client's GET continues: one operation id, retry.redirects on the
// GET, and the first hop's deadline. Before, a stored response started
// none: the GET ran under an id and a deadline of its own (550ms under a
// 400ms deadline).
func TestAStoredRedirectStartsTheChainItsNextHopContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: http.StatusSeeOther,
				Header: http.Header{"Location": {"/orders/1"}}, Body: http.NoBody}}, nil
		}
		h := newHarness(t, []scripted.Step{{Hang: true}, {Delay: 250 * time.Millisecond, Status: 200}},
			otelretry.WithAttemptTimeout(300*time.Millisecond), otelretry.WithDeadline(400*time.Millisecond),
			otelretry.WithStateCheck(hook))
		start := time.Now()
		resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order"))
		if err == nil {
			resp.Body.Close()
		}
		if took := time.Since(start); err == nil || took != 400*time.Millisecond {
			t.Errorf("the chain ended after %v with %v; want it cut at the first hop's 400ms deadline", took, err)
		}
		if calls := h.base.Calls(); len(calls) != 2 || calls[1].Method != http.MethodGet {
			t.Fatalf("%d calls; want the POST and the GET of the 303", len(calls))
		}
		ops := spantest.Operations(h.ended())
		if len(ops) != 2 || attrOf(ops[0], attrs.OperationIDKey) != attrOf(ops[1], attrs.OperationIDKey) {
			t.Fatalf("%d operations; want the POST and its GET under one id", len(ops))
		}
		if _, marked := spantest.Attr(ops[1], attrs.RedirectsKey); !marked {
			t.Errorf("the GET following the stored 303 carries no %s", attrs.RedirectsKey)
		}
	})
}

// ctxBody is the body of a lookup's response made with ctx, as net/http's
// is: its next chunk comes after delay, unless ctx ends first.
type ctxBody struct {
	ctx   context.Context
	delay time.Duration
	data  string
}

func (b *ctxBody) Read(p []byte) (int, error) {
	if b.data == "" {
		return 0, io.EOF
	}
	select {
	case <-b.ctx.Done():
		return 0, context.Cause(b.ctx)
	case <-time.After(b.delay):
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

func (b *ctxBody) Close() error { return nil }

// The stored response a hook hands back (decisions.md's recipe returns its
// lookup's) was fetched with the hook's context: it stays readable after
// the hook returns, until the operation's deadline, which is that
// context's; reading its body to its end, or closing it, lets the context
// go. The hook's context, and
// any it derives, end at the deadline with context.DeadlineExceeded, as a
// context.WithDeadline's do. A panic after the check (the telemetry's, as
// the state_check span ends) closes the stored response and lets the
// context go.
func TestAStoredResponsesBodyOutlivesTheHook(t *testing.T) {
	stored := func(ctx context.Context, delay time.Duration) otelretry.StateResult {
		return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 200, Header: http.Header{},
			Body: &ctxBody{ctx: ctx, delay: delay, data: `{"order":"applied"}`}}}
	}
	for name, tc := range map[string]struct {
		delay   time.Duration // of the stored body's chunk, after the check at 100ms
		wantErr error
	}{
		"read before the deadline": {delay: 200 * time.Millisecond},
		"read past the deadline":   {delay: 400 * time.Millisecond, wantErr: context.DeadlineExceeded},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var lookup context.Context
				hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					lookup = ctx
					return stored(ctx, tc.delay), nil
				}
				h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
					otelretry.WithDeadline(400*time.Millisecond), otelretry.WithStateCheck(hook))
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order"))
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				if !errors.Is(err, tc.wantErr) || (err == nil && string(body) != `{"order":"applied"}`) {
					t.Errorf("stored body %q, %v; want the record, or %v", body, err, tc.wantErr)
				}
				if tc.wantErr == nil && lookup.Err() == nil {
					t.Error("the lookup's context outlives its body read to its end")
				}
				resp.Body.Close()
				if lookup.Err() == nil {
					t.Error("the lookup's context outlives its closed body")
				}
			})
		})
	}
	t.Run("a lookup at the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var deadline time.Time
			var ended, derivedEnded error
			hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				deadline, _ = ctx.Deadline()
				derived, cancel := context.WithTimeout(ctx, time.Hour) // a per-lookup timeout
				defer cancel()
				<-derived.Done()
				ended, derivedEnded = ctx.Err(), derived.Err()
				return otelretry.StateResult{}, context.Cause(derived)
			}
			h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
				otelretry.WithDeadline(400*time.Millisecond), otelretry.WithStateCheck(hook))
			start := time.Now()
			_, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order"))
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Fatalf("err %v, want ErrOutcomeUnknown", err)
			}
			if deadline.Sub(start) != 400*time.Millisecond || ended != context.DeadlineExceeded || derivedEnded != context.DeadlineExceeded {
				t.Errorf("hook's context: deadline %v after the start, ended %v, a derived one %v; want 400ms and context.DeadlineExceeded",
					deadline.Sub(start), ended, derivedEnded)
			}
		})
	})
	t.Run("a panic after the check", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var lookup context.Context
			body := &closeCounted{Reader: strings.NewReader(`{"order":"applied"}`)}
			hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				lookup = ctx
				return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 200, Header: http.Header{}, Body: body}}, nil
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(panicOnEnd{name: attrs.StateCheckSpanName}))
			rt := otelretry.NewTransport(scripted.New(scripted.Step{Hang: true}), otelretry.WithTracerProvider(tp),
				otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(300*time.Millisecond), otelretry.WithStateCheck(hook))
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Error("want the span processor's panic to go on")
					}
				}()
				rt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
			}()
			if lookup == nil || lookup.Err() == nil || body.closed.Load() != 1 {
				t.Errorf("after the panic: the hook's context ended: %v; the stored body closed %d times; want ended and once",
					lookup != nil && lookup.Err() != nil, body.closed.Load())
			}
		})
	})
}

// panicOnEnd panics when a span of the given name ends.
type panicOnEnd struct{ name string }

func (p panicOnEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p panicOnEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == p.name {
		panic("span processor: boom")
	}
}
func (panicOnEnd) Shutdown(context.Context) error   { return nil }
func (panicOnEnd) ForceFlush(context.Context) error { return nil }

// closeCounted counts its Close calls.
type closeCounted struct {
	io.Reader
	closed atomic.Int32
}

func (b *closeCounted) Close() error { b.closed.Add(1); return nil }

// docs/decisions.md, footnote ² of row 36 (not_applied: "retry², with no
// pause"): "the body must be replayable (stop, not_replayable, with a
// body_not_replayable event)". A read whose retry is due with a body that
// cannot be sent again gets that event on its attempt span; a write whose
// state check said not_applied, and whose resend is refused for the same
// reason, got it on no span at all; it is on the state_check span.
func TestAStateChecksResendRefusedForItsBodyRecordsBodyNotReplayable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		// A body of unknown length without GetBody: not buffered, so not replayable.
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", io.MultiReader(strings.NewReader("order")))
		resp, err := h.transprt.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Reason != attrs.ReasonNotReplayable || !errors.Is(err, otelretry.ErrNotReplayable) {
			t.Fatalf("err = %v; want stop, not_replayable", err)
		}
		if n := len(h.base.Calls()); n != 1 {
			t.Fatalf("%d calls, want 1", n)
		}
		var where []string
		for _, s := range h.ended() {
			for _, e := range s.Events() {
				if e.Name == attrs.EventBodyNotReplayable {
					where = append(where, s.Name())
				}
			}
		}
		if len(where) != 1 {
			t.Errorf("body_not_replayable events on spans %v; want one, for the resend the state check asked for and the body refused\n%s",
				where, dumpSpans(h.ended()))
		}
	})
}

// docs/time-and-bodies.md: a write in flight when the caller's deadline
// passes ends deadline_exceeded, ErrOutcomeUnknown, "no state check runs:
// no time is left for one". When the operation's own deadline
// (WithDeadline, 30 s by default) cuts the write instead, no time is left
// either, yet the hook is called, with a context that is already done: its
// lookup can only fail, and the state_check span records that failure.
// It is not called: the write ends check_state, its outcome unknown.
func TestNoStateCheckRunsOnceTheOperationsDeadlinePassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		var atEntry error
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithDeadline(300*time.Millisecond), // the attempt timeout (default 10 s) is longer
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				calls++
				atEntry = ctx.Err()
				if atEntry != nil {
					return otelretry.StateResult{}, atEntry // a lookup made with ctx fails at once
				}
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}))
		_, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order"))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v; want ErrOutcomeUnknown", err)
		}
		if calls > 0 {
			var rerr *otelretry.Error
			errors.As(err, &rerr)
			t.Errorf("the state check ran with its context already done (%v) after the deadline cut the write; operation ended %s (%s)",
				atEntry, rerr.Outcome, rerr.Reason)
		}
	})
}

// Skipping the hook once the deadline passed (above) dropped the answer's
// charge, which settle holds back for a state check: a write the
// deadline cut cost the host a token without a hook and none with one.
func TestAWriteTheDeadlineCutCostsTheBudgetWithAHookToo(t *testing.T) {
	available := map[string]int{}
	for _, name := range []string{"no hook", "hook"} {
		synctest.Test(t, func(t *testing.T) {
			b := &otelretry.Budget{}
			opts := []otelretry.Option{otelretry.WithBudget(b), otelretry.WithDeadline(300 * time.Millisecond)}
			if name == "hook" {
				opts = append(opts, otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
					return otelretry.StateResult{State: attrs.StateUnknown}, nil
				}))
			}
			h := newHarness(t, []scripted.Step{{Hang: true}}, opts...)
			if _, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order")); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Fatalf("%s: err = %v; want ErrOutcomeUnknown", name, err)
			}
			probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			available[name] = b.Available(probe)
		})
	}
	if available["hook"] != available["no hook"] {
		t.Errorf("Budget.Available after a write the deadline cut: %d with a state check hook, %d without", available["hook"], available["no hook"])
	}
}

// slowWrites is a server that applies each write it is sent 600ms after it
// gets it, whether or not the client still waits (a cut attempt ends only
// the client's wait), and answers 201 to a client still there.
type slowWrites struct {
	mu      sync.Mutex
	applied int
}

func (s *slowWrites) RoundTrip(r *http.Request) (*http.Response, error) {
	time.AfterFunc(600*time.Millisecond, func() { s.mu.Lock(); s.applied++; s.mu.Unlock() })
	select {
	case <-r.Context().Done():
		return nil, r.Context().Err()
	case <-time.After(700 * time.Millisecond):
		return &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
}

func (s *slowWrites) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.applied }

// The lookup of a write the attempt timeout cut while the server still
// works on it finds nothing until the server is done: WithStateCheckDelay
// holds the check until then, so a write is applied once. Where the
// deadline does not leave the delay, no check runs and the outcome stays
// unknown at once; a caller who gives up during the wait ends the
// operation as during a check.
func TestStateCheckDelayWaitsOutTheServersWork(t *testing.T) {
	for _, tc := range []struct {
		name        string
		delay       time.Duration
		cancelAt    time.Duration // the caller gives up (0: never)
		wantApplied int
		wantChecks  int
		wantOutcome string
		wantEnd     time.Duration // when RoundTrip returns
	}{
		{"a delay past the server's work: applied once", time.Second, 0, 1, 1, "return", 1100 * time.Millisecond},
		{"no delay: the lookup comes too soon, the write is applied twice", 0, 0, 2, 2, "max_attempts", 200 * time.Millisecond},
		{"a delay past the deadline: not cut, answered", 3 * time.Second, 0, 1, 0, "return", 700 * time.Millisecond},
		{"the caller gives up during the wait", time.Second, 300 * time.Millisecond, 1, 0, "canceled", 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server := &slowWrites{}
				checks := 0
				hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					checks++
					if server.count() > 0 {
						return otelretry.StateResult{State: attrs.StateApplied, Response: stored(201, "order 1")}, nil
					}
					return otelretry.StateResult{State: attrs.StateNotApplied}, nil
				}
				h := newHarness(t, nil)
				h.transprt = otelretry.NewTransport(server, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
					otelretry.WithMaxAttempts(2), otelretry.WithDeadline(2*time.Second),
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithStateCheck(hook),
					otelretry.WithStateCheckDelay(tc.delay))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				resp, err := h.transprt.RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
				end := time.Since(start)
				if resp != nil {
					resp.Body.Close()
				}
				time.Sleep(time.Second) // every write sent is applied by now
				if got := server.count(); got != tc.wantApplied || checks != tc.wantChecks || end != tc.wantEnd {
					t.Errorf("applied %d, %d checks, returned at %v (err %v); want %d, %d, %v",
						got, checks, end, err, tc.wantApplied, tc.wantChecks, tc.wantEnd)
				}
				if tc.wantOutcome != "return" && tc.wantOutcome != "max_attempts" && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v, want ErrOutcomeUnknown", err)
				}
				if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != tc.wantOutcome {
					t.Errorf("outcome = %s, want %s", got, tc.wantOutcome)
				}
			})
		})
	}
}

// The server's bound on a write counts from when it got the write, which
// is before the client gave up on it. The delay was counted from the
// attempt's start, before its connection: a slow dial ate into it, the
// lookup ran before the bound had passed since the server got the write,
// and the write was sent (and applied) twice.
func TestStateCheckDelayCountsFromTheCutNotTheDial(t *testing.T) {
	const (
		dial  = 400 * time.Millisecond
		delay = 1500 * time.Millisecond // the server applies or drops a write within 1.5 s
		work  = 1300 * time.Millisecond // this one applies it 1.3 s after it got it
	)
	var mu sync.Mutex
	applied, writes := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			mu.Lock()
			writes++
			mu.Unlock()
			time.AfterFunc(work, func() { mu.Lock(); applied++; mu.Unlock() })
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
			w.WriteHeader(201)
		default:
			mu.Lock()
			n := applied
			mu.Unlock()
			if n > 0 {
				w.WriteHeader(200)
				return
			}
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	lookups := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/by-key/"+c.OperationID, nil)
		resp, err := lookups.Do(req)
		if err != nil {
			return otelretry.StateResult{}, err
		}
		if resp.StatusCode == 200 {
			return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
		}
		resp.Body.Close()
		if resp.StatusCode == 404 {
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	slowDial := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case <-time.After(dial): // a slow handshake, a DNS lookup, a wait for a connection
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer slowDial.CloseIdleConnections()
	defer lookups.CloseIdleConnections()
	tr := otelretry.NewTransport(slowDial, quietOptions(otelretry.WithMaxAttempts(2),
		otelretry.WithDeadline(10*time.Second), otelretry.WithAttemptTimeout(500*time.Millisecond),
		otelretry.WithStateCheck(hook), otelretry.WithStateCheckDelay(delay))...)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/orders", strings.NewReader("order"))
	resp, err := tr.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	time.Sleep(2 * time.Second) // every write sent is applied by now
	mu.Lock()
	defer mu.Unlock()
	if writes != 1 || applied != 1 {
		t.Errorf("the write reached the server %d times and was applied %d times (err %v); want once: the check should run %v after the cut, not after the attempt began (before its %v dial)",
			writes, applied, err, delay, dial)
	}
}

// A write cut by the attempt timeout costs its host a token (docs/budget.md:
// "a transport error other than the caller's cancellation ... costs one
// token, a timeout too"), whatever its state check hook does: a hook that
// panicked left it uncharged.
func TestACutWriteCostsATokenWhenItsStateCheckPanics(t *testing.T) {
	available := map[string]int{}
	for _, name := range []string{"unknown", "panics"} {
		synctest.Test(t, func(t *testing.T) {
			b := &otelretry.Budget{}
			hook := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				if name == "panics" {
					panic("lookup boom")
				}
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}
			h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithBudget(b),
				otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
				otelretry.WithStateCheck(hook))
			func() {
				defer func() { recover() }()
				h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
			}()
			probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			available[name] = b.Available(probe)
		})
	}
	probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	fresh := (&otelretry.Budget{}).Available(probe)
	if available["unknown"] >= fresh || available["panics"] != available["unknown"] {
		t.Errorf("Budget.Available after a cut write: %d when its state check panicked, %d when it said unknown, %d fresh; want a token less than fresh either way",
			available["panics"], available["unknown"], fresh)
	}
}

// The budget charges a cut write as it ends, whatever the state check's
// delay: it showed no charge during the delay, and other operations'
// retries were admitted on the tokens the cut writes cost.
func TestTheBudgetChargesACutWriteAsItEndsWhateverTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &otelretry.Budget{}
		hook := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}
		h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithBudget(b),
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(time.Minute),
			otelretry.WithStateCheck(hook), otelretry.WithStateCheckDelay(20*time.Second))
		probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		fresh := b.Available(probe)
		done := make(chan error, 1)
		go func() {
			_, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
			done <- err
		}()
		time.Sleep(time.Second) // the write was cut at 100 ms; its check waits until 20.1 s
		synctest.Wait()
		during := b.Available(probe)
		err := <-done
		after := b.Available(probe)
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
		}
		if during >= fresh || during != after {
			t.Errorf("Budget.Available: %d fresh, %d 0.9 s after the write was cut (in the check's delay), %d after its check; want the charge at the cut, as after",
				fresh, during, after)
		}
	})
}

// The attempt timeout cuts a write a state check resolves only where the
// check can follow the cut (WithStateCheckDelay after it, before the
// deadline): otherwise the deadline alone bounds its wait, as any other
// write's, and a completion slower than the attempt timeout is answered.
// docs/decisions.md's recipe, at a tenth of its times (a 60 s deadline, a
// 20 s delay, the default 10 s attempt timeout): the first write is
// dropped by the server, the check finds it not applied, the resend is
// applied and answered 1.5 s after it was sent, 1.5 s before the
// deadline; it was cut at 1 s, no check ran, and the caller got unknown.
func TestAWriteNoCheckCanFollowIsNotCutByTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls, applied := 0, 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 { // dropped: never applied, never answered
				<-r.Context().Done()
				return nil, r.Context().Err()
			}
			select {
			case <-r.Context().Done():
				time.AfterFunc(500*time.Millisecond, func() { mu.Lock(); applied++; mu.Unlock() }) // the server's work goes on
				return nil, r.Context().Err()
			case <-time.After(1500 * time.Millisecond):
				mu.Lock()
				applied++
				mu.Unlock()
				return &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
		})
		checks := 0
		hook := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			checks++
			mu.Lock()
			defer mu.Unlock()
			if applied > 0 {
				return otelretry.StateResult{State: attrs.StateApplied, Response: stored(201, "order 1")}, nil
			}
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		tr := otelretry.NewTransport(base, quietOptions(
			otelretry.WithDeadline(6*time.Second), otelretry.WithAttemptTimeout(time.Second),
			otelretry.WithStateCheckDelay(2*time.Second), otelretry.WithStateCheck(hook))...)
		start := time.Now()
		resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		end := time.Since(start)
		if resp != nil {
			resp.Body.Close()
		}
		time.Sleep(5 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("returned at %v after %d calls and %d checks with %v (the write applied %d times); want its 201 at 4.5s: the resend, cut at 4s, could not be checked before the 6s deadline",
				end, calls, checks, err, applied)
		}
	})
}

// A write only a delayed state check resolves is cut by the attempt timeout
// only where the check still fits before the deadline after the cut, and
// the check counts its delay from the cut, not from the base's return: a
// base that took 50 ms to give the attempt back once its context was
// canceled had its write cut at 1 s and not checked (1.05 s + 2 s is past
// the 3.02 s deadline), and the caller got ErrOutcomeUnknown at 1.05 s.
func TestACutWriteWhoseBaseReturnsLateIsStillChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const T, d = time.Second, 2 * time.Second
		D := T + d + 20*time.Millisecond
		var mu sync.Mutex
		checks := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			select {
			case <-time.After(2500 * time.Millisecond): // the answer comes before the deadline
				return &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			case <-r.Context().Done():
				time.Sleep(50 * time.Millisecond) // the base's own cleanup before it returns
				return nil, r.Context().Err()
			}
		})
		hook := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			mu.Lock()
			checks++
			mu.Unlock()
			return otelretry.StateResult{State: attrs.StateApplied, Response: stored(201, "order 1")}, nil
		}
		tr := otelretry.NewTransport(base, quietOptions(
			otelretry.WithDeadline(D), otelretry.WithAttemptTimeout(T),
			otelretry.WithStateCheckDelay(d), otelretry.WithStateCheck(hook))...)
		start := time.Now()
		resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		end := time.Since(start)
		if resp != nil {
			resp.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil || checks != 1 || end != T+d {
			t.Errorf("returned at %v with %v after %d checks; want the stored 201 of one check at %v (the cut plus the delay)", end, err, checks, T+d)
		}
	})
}
