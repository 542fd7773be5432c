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
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

type reviewClosed struct {
	io.Reader
	closed *atomic.Int32
}

func (b reviewClosed) Close() error { b.closed.Add(1); return nil }

// A keyed write answered 409 (its key's first request still in progress)
// with no attempt left goes to the state check (decisions.md, footnote 2).
// Whatever the check answers, the 409 the base returned is a response the
// transport took: its body must be closed (or the 409 returned), never
// dropped open.
func TestKeyed409ThenLimitClosesThe409(t *testing.T) {
	for _, state := range []attrs.StateCheckResult{attrs.StateApplied, attrs.StateUnknown, attrs.StateNotApplied} {
		t.Run(string(state), func(t *testing.T) {
			var closed, sent, checks atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent.Add(1)
				if r.Body != nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				return &http.Response{StatusCode: http.StatusConflict, Header: http.Header{}, Request: r,
					Body: reviewClosed{strings.NewReader("in progress"), &closed}}, nil
			})
			check := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
				checks.Add(1)
				res := otelretry.StateResult{State: state}
				if state == attrs.StateApplied {
					res.Response = &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("order 1"))}
				}
				return res, nil
			}
			tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
				otelretry.WithMaxAttempts(1), otelretry.WithStateCheck(check), otelretry.WithoutBudget())
			var res otelretry.Results
			ctx := otelretry.WithResults(t.Context(), &res)
			resp, err := tr.RoundTrip(post(t, ctx, "http://api.test/orders", `{"sku":"A1"}`))
			var got *http.Response
			if err == nil {
				got = resp
			}
			last, _ := res.Last()
			t.Logf("checks=%d sent=%d err=%v last=%+v", checks.Load(), sent.Load(), err, last)
			if got != nil && got.StatusCode == http.StatusConflict {
				got.Body.Close()
				return // the 409 itself was returned
			}
			if got != nil {
				got.Body.Close()
			}
			if closed.Load() != 1 {
				t.Errorf("the 409's body was closed %d times, want 1 (outcome %s/%s, status returned %v)", closed.Load(), last.Outcome, last.Reason, got != nil)
			}
		})
	}
}

// Every answer of the state check a keyed write's stopped resend asks
// for, under every limit that stops it: the error, the Results and
// ErrOutcomeUnknown agree, applied returns the stored response, and the
// write is never sent twice by the check.
func TestKeyedLookupAnswersAgree(t *testing.T) {
	type answer struct {
		name        string
		hook        func(ctx context.Context) (otelretry.StateResult, error)
		wantUnknown bool
		wantStatus  int
	}
	answers := []answer{
		{"applied", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}}, nil
		}, false, 201},
		{"applied without response", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateApplied}, nil
		}, true, 0},
		{"unknown", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}, true, 0},
		{"not_applied", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}, false, 0},
		{"error", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{}, errors.New("lookup failed")
		}, true, 0},
		{"outside the set", func(context.Context) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: "maybe"}, nil
		}, true, 0},
		{"slow past the deadline", func(ctx context.Context) (otelretry.StateResult, error) {
			<-ctx.Done()
			return otelretry.StateResult{}, ctx.Err()
		}, true, 0},
	}
	limits := []struct {
		name string
		opts []otelretry.Option
		body func() io.Reader
	}{
		{"max_attempts", []otelretry.Option{otelretry.WithMaxAttempts(1), otelretry.WithoutBudget()}, func() io.Reader { return strings.NewReader("order") }},
		{"not_replayable", []otelretry.Option{otelretry.WithoutBudget()}, func() io.Reader { return io.NopCloser(strings.NewReader("order")) }},
	}
	for _, l := range limits {
		for _, a := range answers {
			t.Run(l.name+"/"+a.name, func(t *testing.T) {
				var sent, checks atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent.Add(1)
					if r.Body != nil {
						io.Copy(io.Discard, r.Body)
						r.Body.Close()
					}
					return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
				})
				hook := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
					checks.Add(1)
					return a.hook(ctx)
				}
				opts := append([]otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
					otelretry.WithStateCheck(hook), otelretry.WithDeadline(200 * time.Millisecond)}, l.opts...)
				tr := otelretry.NewTransport(base, opts...)
				var res otelretry.Results
				ctx := otelretry.WithResults(t.Context(), &res)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", l.body())
				resp, err := tr.RoundTrip(req)
				status := 0
				if err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
				last, _ := res.Last()
				var oe *otelretry.Error
				errors.As(err, &oe)
				t.Logf("sent=%d checks=%d status=%d last=%s/%s unknown=%v err=%v", sent.Load(), checks.Load(), status, last.Outcome, last.Reason, last.OutcomeUnknown, err)
				if checks.Load() != 1 {
					t.Errorf("checks %d, want 1", checks.Load())
				}
				if sent.Load() != 1 {
					t.Errorf("the write was sent %d times, want 1 (the limit stops its resend)", sent.Load())
				}
				if status != a.wantStatus {
					t.Errorf("status %d, want %d", status, a.wantStatus)
				}
				if got := errors.Is(err, otelretry.ErrOutcomeUnknown); got != a.wantUnknown || last.OutcomeUnknown != a.wantUnknown {
					t.Errorf("ErrOutcomeUnknown %v, Results.OutcomeUnknown %v, want %v", got, last.OutcomeUnknown, a.wantUnknown)
				}
				if oe != nil && (string(oe.Outcome) != string(last.Outcome) || oe.Reason != last.Reason) {
					t.Errorf("error says %s/%s, Results %s/%s", oe.Outcome, oe.Reason, last.Outcome, last.Reason)
				}
			})
		}
	}
}

// Intent{NoRetry: true} on a write whose answer was lost: without a key
// the state check is asked (row 15 comes first); with a key, does turning
// keys on lose the lookup, as the newest commit's own test calls a defect?
func TestKeyedNoRetryWriteIsLookedUp(t *testing.T) {
	for _, keys := range []bool{false, true} {
		t.Run(fmt.Sprintf("keys=%v", keys), func(t *testing.T) {
			var checks atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.Body != nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
			})
			hook := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
				checks.Add(1)
				return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody}}, nil
			}
			opts := []otelretry.Option{otelretry.WithStateCheck(hook), otelretry.WithoutBudget()}
			if keys {
				opts = append(opts, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
			}
			tr := otelretry.NewTransport(base, opts...)
			var res otelretry.Results
			ctx := otelretry.WithIntent(otelretry.WithResults(t.Context(), &res), otelretry.Intent{NoRetry: true})
			resp, err := tr.RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			if checks.Load() != 1 {
				t.Errorf("state check asked %d times, want 1: ended %s (%s), unknown=%v", checks.Load(), last.Outcome, last.Reason, last.OutcomeUnknown)
			}
		})
	}
}

// The same 409, through the scripted base and recording providers: once
// RoundTrip returned, every span it started has ended (the attempt span
// of an answer stays open until its body is closed).
func TestKeyed409ThenLimitLeavesNoSpanOpen(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	hook := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	h := newHarness(t, []scripted.Step{{Err: reset}, {Status: http.StatusConflict, Body: "in progress"}}, otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithStateCheck(hook))
	resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
	if err == nil {
		resp.Body.Close()
	}
	if open := openSpans(h.spans); len(open) > 0 {
		t.Errorf("RoundTrip returned (%v); spans left open: %q; attempt spans ended: %d of 2", err, open, len(h.attempts()))
	}
}
