// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net"
	"net/http"
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
func TestNetHTTPsFailureBeforeAConnectionIsNoSilence(t *testing.T) {
	var calls atomic.Int32
	base := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) {
		calls.Add(1)
		return nil, errors.New("no proxy for this host")
	}}
	for _, wrap := range []bool{false, true} {
		var rt http.RoundTripper = base
		if wrap {
			rt = roundTripFunc(base.RoundTrip) // a layer between: net/http asks for the trace first
		}
		tr := otelretry.NewTransport(rt, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
		var results otelretry.Results
		req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("answered")
		}
		if r, _ := results.Last(); r.OutcomeUnknown || errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("wrapped %v: %s (%s), unknown %v; want the outcome known: net/http never asked for a connection", wrap, r.Outcome, r.Reason, r.OutcomeUnknown)
		}
	}
}
