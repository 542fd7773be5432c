// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A base that reports nothing through httptrace (a custom transport: a
// mesh's client, an SDK's own) and fails a write with an error of its
// own says nothing of where the write got: it may have been applied. The
// write is not resent and its outcome is unknown (check_state,
// ErrOutcomeUnknown; decisions.md row 15), as for a timeout. It ended
// stop (not_idempotent) with the outcome known, so a caller that resends
// what otelretry says was not applied sent it twice. An error that
// proves the request never left (a refused dial) is retried as before.
func TestASilentBasesFailureLeavesAWriteUnknown(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name    string
		err     error
		method  string
		calls   int32
		outcome attrs.Outcome
		unknown bool
	}{
		{"its own error, POST", errors.New("upstream unavailable"), http.MethodPost, 1, attrs.OutcomeCheckState, true},
		{"its own error, GET", errors.New("upstream unavailable"), http.MethodGet, 3, attrs.OutcomeMaxAttempts, false},
		{"a refused dial, POST", refused, http.MethodPost, 3, attrs.OutcomeMaxAttempts, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls.Add(1)
				return nil, tc.err
			})
			rt := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
			var results otelretry.Results
			req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), tc.method, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the failure came back as a response")
			}
			r, _ := results.Last()
			if calls.Load() != tc.calls || r.Outcome != tc.outcome || r.OutcomeUnknown != tc.unknown || errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown {
				t.Errorf("%d calls, %s (%s), unknown %v, err %v; want %d calls, %s, unknown %v",
					calls.Load(), r.Outcome, r.Reason, r.OutcomeUnknown, err, tc.calls, tc.outcome, tc.unknown)
			}
		})
	}
}

// net/http's Transport reports every connection it asks for: a write it
// failed before asking for one (its Proxy function's error) never left,
// and ends stop with its outcome known, as before, not check_state.
// Below a layer, its silence cannot be told from a custom base's (a
// wrapper asks for the attempt's ClientTrace over either): the write then
// ends check_state, the safe side. Taking an ask for the trace for
// net/http's made a custom base's failed write a known stop under
// otelhttp's WithClientTrace (a reviewer's find).
func TestNetHTTPsFailureBeforeAConnectionIsNoSilence(t *testing.T) {
	var calls atomic.Int32
	netHTTP := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) {
		calls.Add(1)
		return nil, errors.New("no proxy for this host")
	}}
	custom := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("upstream unavailable") })
	asksTrace := func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			_ = httptrace.ContextClientTrace(r.Context()) // as otelhttp's WithClientTrace does
			return next.RoundTrip(r)
		})
	}
	for _, tc := range []struct {
		name    string
		base    http.RoundTripper
		unknown bool
	}{
		{"net/http", netHTTP, false},
		{"net/http below a layer", asksTrace(netHTTP), true},
		{"a custom base below a layer that asks for the trace", asksTrace(custom), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := otelretry.NewTransport(tc.base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
			var results otelretry.Results
			req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("answered")
			}
			if r, _ := results.Last(); r.OutcomeUnknown != tc.unknown || errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown || r.Attempts != 1 {
				t.Errorf("%s (%s) after %d, unknown %v; want 1 attempt, unknown %v", r.Outcome, r.Reason, r.Attempts, r.OutcomeUnknown, tc.unknown)
			}
		})
	}
}
