// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Evidence's godoc: "It reads the code from the first *http3.Error or
// *quic.StreamError in err's chain"; it read any *http3.Error before any
// *quic.StreamError (a reviewer's find). When the first of them in the chain is
// a *quic.StreamError the peer sent with H3_REQUEST_CANCELLED (a request
// that may have been partly processed), no proof may come out of a later
// *http3.Error with H3_REQUEST_REJECTED.
func TestEvidenceReadsTheFirstStreamErrorInTheChain(t *testing.T) {
	cancelled := &quic.StreamError{StreamID: 0, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestCanceled), Remote: true}
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	for name, err := range map[string]error{
		"join":    errors.Join(cancelled, rejected),
		"errorf":  fmt.Errorf("read: %w, then: %w", cancelled, rejected),
		"wrapped": fmt.Errorf("op: %w", errors.Join(fmt.Errorf("stream: %w", cancelled), rejected)),
	} {
		t.Run(name, func(t *testing.T) {
			if e, ok := h3.Evidence(err); ok {
				t.Errorf("Evidence(%v) = %+v, true; the first stream error in the chain is H3_REQUEST_CANCELLED, which proves nothing", err, e)
			}
		})
	}
}

// The mirror case: the first stream error in the chain is the peer's
// H3_REQUEST_REJECTED; by the godoc's rule it is the one read.
func TestEvidenceReadsAFirstRejectionBeforeALaterCancel(t *testing.T) {
	rejected := &quic.StreamError{StreamID: 0, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestRejected), Remote: true}
	cancelled := &http3.Error{ErrorCode: http3.ErrCodeRequestCanceled, Remote: true}
	err := errors.Join(rejected, cancelled)
	if _, ok := h3.Evidence(err); !ok {
		t.Errorf("Evidence(%v) = false; the first stream error in the chain is the peer's H3_REQUEST_REJECTED", err)
	}
}

// failsOnce fails its first call with err, then answers 201.
type failsOnce struct {
	err   error
	calls int
}

func (b *failsOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls++
	if b.calls == 1 {
		return nil, b.err
	}
	return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// Through otelretry: a POST whose attempt failed with the peer's
// H3_REQUEST_CANCELLED (possibly processed) must not be resent, even when
// a later error in the chain names H3_REQUEST_REJECTED.
func TestACancelledPOSTIsNotResentOverAJoinedRejection(t *testing.T) {
	cancelled := &quic.StreamError{StreamID: 0, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestCanceled), Remote: true}
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	base := &failsOnce{err: errors.Join(cancelled, rejected)}
	rt := otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify), otelretry.WithoutBudget())
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, "https://127.0.0.1:1/orders", strings.NewReader(`{"sku":1}`))
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	r, _ := results.Last()
	if base.calls != 1 || !r.OutcomeUnknown {
		t.Errorf("POST sent %d times, outcome %s, unknown %v; want 1 send, outcome unknown", base.calls, r.Outcome, r.OutcomeUnknown)
	}
}

// An error whose As method gives a stream error is read where errors.As
// would read it: before what it wraps.
func TestEvidenceReadsAnAsMethodInItsPlace(t *testing.T) {
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	cancelled := &quic.StreamError{ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestCanceled), Remote: true}
	if _, ok := h3.Evidence(errors.Join(asStreamError{rejected}, cancelled)); !ok {
		t.Error("a rejection given by an As method first in the chain was not read")
	}
	if _, ok := h3.Evidence(errors.Join(cancelled, asStreamError{rejected})); ok {
		t.Error("a rejection given by an As method after a cancel was read")
	}
}

// asStreamError gives its *http3.Error through As only.
type asStreamError struct{ e *http3.Error }

func (a asStreamError) Error() string { return "layer: " + a.e.Error() }

func (a asStreamError) As(target any) bool {
	if p, ok := target.(**http3.Error); ok {
		*p = a.e
		return true
	}
	return false
}

// A typed nil stream error inside a join (a layer that joins a nil
// *http3.Error it declared as error): Evidence, and Classify in a
// RoundTrip, must not panic reading it, and read on past it (the chain
// walk of the fix above read its code, a reviewer's find).
func TestEvidenceReadsPastATypedNilStreamError(t *testing.T) {
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	var nilStream *quic.StreamError
	// A nil *http3.Error is left out: its own Unwrap dereferences it, so
	// errors.As panics on such a chain wherever it is walked.
	for name, err := range map[string]error{
		"nil *quic.StreamError first": errors.Join(nilStream, rejected),
		"wrapped":                     fmt.Errorf("layer: %w", errors.Join(nilStream, rejected)),
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Evidence panicked: %v", p)
				}
			}()
			if _, ok := h3.Evidence(err); !ok {
				t.Error("the rejection after the typed nil was not read")
			}
			h3.Classify(otelretry.Answer{Err: err})
		})
	}
}
