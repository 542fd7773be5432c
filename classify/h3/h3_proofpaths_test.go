// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// converts gives, through an As method only, the one error it holds, as
// a layer of one's own over quic-go may (errors.As reads it so).
type converts struct{ to error }

func (c converts) Error() string { return "layer: " + c.to.Error() }

func (c converts) As(target any) bool {
	switch p := target.(type) {
	case **http3.Error:
		e, ok := c.to.(*http3.Error)
		if ok {
			*p = e
		}
		return ok
	case **quic.StreamError:
		e, ok := c.to.(*quic.StreamError)
		if ok {
			*p = e
		}
		return ok
	case **quic.ApplicationError:
		e, ok := c.to.(*quic.ApplicationError)
		if ok {
			*p = e
		}
		return ok
	}
	return false
}

// Evidence's godoc: "the server (never the client: Remote must be set)
// reset the request's stream with H3_REQUEST_REJECTED". A stream error
// given by an As method is read as the same error given by type: the
// client's own rejection proves nothing, the server's does.
func TestAnAsMethodsLocalRejectionProvesNothing(t *testing.T) {
	rejected := http3.ErrCodeRequestRejected
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"http3 error, local", converts{&http3.Error{ErrorCode: rejected}}, false},
		{"quic stream error, local", converts{&quic.StreamError{ErrorCode: quic.StreamErrorCode(rejected)}}, false},
		{"http3 error, remote", converts{&http3.Error{ErrorCode: rejected, Remote: true}}, true},
		{"quic stream error, remote", converts{&quic.StreamError{ErrorCode: quic.StreamErrorCode(rejected), Remote: true}}, true},
		{"wrapped local", fmt.Errorf("rt: %w", converts{&http3.Error{ErrorCode: rejected}}), false},
	} {
		if _, ok := h3.Evidence(tc.err); ok != tc.want {
			t.Errorf("%s: Evidence proof = %v, want %v", tc.name, ok, tc.want)
		}
		if got := h3.Classify(otelretry.Answer{Err: tc.err}); (got != otelretry.Classification{}) != tc.want {
			t.Errorf("%s: Classify = %+v, proof wanted %v", tc.name, got, tc.want)
		}
	}
}

// Evidence's godoc: "an error that holds a *quic.ApplicationError, the
// connection's close, proves nothing of one request, whatever its code"
// (as errors.As would find one: by type or by an As method). A layer that
// gives the close only through As, beside a rejected stream, proves
// nothing.
func TestAConnectionCloseGivenByAsProvesNothing(t *testing.T) {
	closed := converts{&quic.ApplicationError{ErrorCode: quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), Remote: true}}
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	for name, err := range map[string]error{
		"close first":  errors.Join(closed, rejected),
		"close second": errors.Join(rejected, closed),
		"wrapped":      fmt.Errorf("rt: %w", errors.Join(errors.New("x"), closed, rejected)),
	} {
		var app *quic.ApplicationError
		if !errors.As(err, &app) {
			t.Fatalf("%s: errors.As finds no *quic.ApplicationError", name)
		}
		if ev, ok := h3.Evidence(err); ok {
			t.Errorf("%s: Evidence = %+v, true; a connection's close proves nothing", name, ev)
		}
	}
}

// Classify's godoc: "an attempt that got no response because the server
// reset its stream ... is NotProcessed ...; any other answer gets the
// zero Classification." An answer with a status got a response.
func TestAnAnswerWithAStatusIsNoProof(t *testing.T) {
	rejected := &http3.Error{ErrorCode: http3.ErrCodeRequestRejected, Remote: true}
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		if got := h3.Classify(otelretry.Answer{StatusCode: status, Err: rejected}); got != (otelretry.Classification{}) {
			t.Errorf("Classify(status %d, H3_REQUEST_REJECTED) = %+v; want the zero Classification", status, got)
		}
	}
}
