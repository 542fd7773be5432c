// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A failover layer between an outer and an inner otelretry: it sends the
// request through the inner (or directly, through a plain Transport) to
// the primary and, on an error, through the inner to the secondary,
// returning the last error (as go-retryablehttp does). The
// primary read the write and lost its answer (the inner says
// ErrOutcomeUnknown); the secondary's certificate is rejected (the inner
// ends stop, certificate, after one attempt). The outer's operation
// must not call its write unsent: the first inner operation sent it. The
// inner's one-attempt stop is the outer's own only where the attempt
// made that one operation below (unsentBelow); it ended stop
// (certificate), the outcome known (a reviewer's find on the first
// version).
func TestAnInnerStopAfterAnotherInnerCallIsNoProofOfTheWrite(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("first hop direct %v", direct), func(t *testing.T) { innerStopAfterASentWrite(t, direct) })
	}
}

func innerStopAfterASentWrite(t *testing.T, direct bool) {
	var applied atomic.Int32
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		applied.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the write was applied; its answer is lost
		}
	}))
	primary.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(primary.Close)
	secondary, _ := rejectedTLSServer(t)
	base := untrustingBase(t, secondary) // the secondary's certificate is not trusted
	inner := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	sURL, _ := url.Parse(secondary.URL)
	var innerErrs []error
	plain := &http.Transport{}
	t.Cleanup(plain.CloseIdleConnections)
	failover := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		first := inner.RoundTrip
		if direct {
			first = plain.RoundTrip // with the attempt's context, heard by its trace
		}
		resp, err := first(r)
		if err == nil {
			return resp, nil
		}
		innerErrs = append(innerErrs, err)
		r2 := r.Clone(r.Context())
		r2.URL.Scheme, r2.URL.Host, r2.Host = sURL.Scheme, sURL.Host, ""
		if r.GetBody != nil {
			r2.Body, _ = r.GetBody()
		}
		resp, err = inner.RoundTrip(r2)
		if err != nil {
			innerErrs = append(innerErrs, err)
		}
		return resp, err
	})
	outer := otelretry.NewTransport(failover, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithMaxAttempts(1))
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, primary.URL, strings.NewReader(`{"sku":1}`))
	resp, err := outer.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the failover succeeded")
	}
	for i, e := range innerErrs {
		t.Logf("inner call %d: %v (unknown %v)", i+1, e, errors.Is(e, otelretry.ErrOutcomeUnknown))
	}
	if applied.Load() != 1 {
		t.Fatalf("primary applied the write %d times; want 1", applied.Load())
	}
	r, _ := results.Last()
	t.Logf("outer: outcome %s reason %s unknown %v; err %v", r.Outcome, r.Reason, r.OutcomeUnknown, err)
	if !r.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("outer: %s (%s), OutcomeUnknown %v, errors.Is(ErrOutcomeUnknown) %v; the write was applied by the primary: want its outcome unknown",
			r.Outcome, r.Reason, r.OutcomeUnknown, errors.Is(err, otelretry.ErrOutcomeUnknown))
	}
}

// A side call a hook or a layer makes with the attempt's context through
// an otelretry client (a token fetch) is an operation below the attempt
// too: the outer cannot tell it from a failover's first hop, so the
// inner's one-attempt certificate stop is the outer's end for a GET
// (stop, certificate: the GET is not retried either way), and a write's
// outcome stays unknown (check_state), the safe side docs/layers.md
// names.
func TestASideCallBelowLeavesAWriteUnknown(t *testing.T) {
	for _, where := range []string{"prepare", "layer"} {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			t.Run(where+"/"+method, func(t *testing.T) { sideCallUnderTheAttempt(t, where, method) })
		}
	}
}

func sideCallUnderTheAttempt(t *testing.T, where, method string) {
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tok")
	}))
	t.Cleanup(tokenSrv.Close)
	srv, _ := rejectedTLSServer(t)
	var calls atomic.Int32

	tokenBase := &http.Transport{}
	t.Cleanup(tokenBase.CloseIdleConnections)
	tokens := &http.Client{Transport: otelretry.NewTransport(tokenBase)}
	fetch := func(r *http.Request) error {
		treq, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, tokenSrv.URL, nil)
		resp, err := tokens.Do(treq)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}

	base := untrustingBase(t, srv)
	counting := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return base.RoundTrip(r)
	})
	inner := otelretry.NewTransport(counting, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	var below http.RoundTripper = inner
	opts := []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}
	switch where {
	case "prepare":
		opts = append(opts, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error { return fetch(r) }))
	case "layer":
		below = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if err := fetch(r); err != nil {
				return nil, err
			}
			return inner.RoundTrip(r)
		})
	}
	outer := otelretry.NewTransport(below, opts...)
	var results otelretry.Results
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"sku":1}`)
	}
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), method, srv.URL, body)
	resp, err := outer.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the certificate was accepted")
	}
	r, _ := results.Last()
	if calls.Load() != 1 {
		t.Errorf("%d calls to the base; want 1", calls.Load())
	}
	if method == http.MethodGet {
		if r.Outcome != attrs.OutcomeStop || r.Reason != attrs.ReasonCertificate {
			t.Errorf("outer: %s (%s); want stop (certificate)", r.Outcome, r.Reason)
		}
		return
	}
	// Two operations below the attempt (the token's and the request's):
	// the inner's end is not the whole story, and the write's is unknown.
	if r.Outcome != attrs.OutcomeCheckState || !r.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("outer: %s (%s), OutcomeUnknown %v; want check_state, the outcome unknown (the safe side, docs/layers.md)", r.Outcome, r.Reason, r.OutcomeUnknown)
	}
}

// Over another otelretry Transport whose PrepareAttemptFunc fails, the
// inner operation makes no attempt, but its hook may have sent anything
// (here the write itself, out of band): the outer takes nothing for
// proof, and the write ends check_state, not resent. It was retried as
// never sent, the hook delivering it 3 times (a reviewer's find).
func TestAnInnerHooksFailureIsNoProofOfTheWrite(t *testing.T) {
	var applied atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Error("the inner's base was called")
		return nil, errors.New("unreachable")
	})
	inner := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(*http.Request, int) error {
		applied.Add(1) // delivered out of band
		return errors.New("delivered out of band, then failed")
	}))
	outer := otelretry.NewTransport(inner, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
	resp, err := outer.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("answered")
	}
	r, _ := results.Last()
	var oe *otelretry.Error
	if applied.Load() != 1 || !r.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.RetryableError() {
		t.Errorf("applied %d, %s (%s) after %d attempts, unknown %v; want applied once, check_state, not retryable above",
			applied.Load(), r.Outcome, r.Reason, r.Attempts, r.OutcomeUnknown)
	}
}
