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
	"syscall"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// errorList is a non-comparable error (a slice type), as k8s.io's
// utilerrors.Aggregate or any `type Errors []error` is.
type errorList []error

func (m errorList) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}
func (m errorList) Unwrap() []error { return m }

func cancelCauseWhen(t *testing.T, cause error, when <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancelCause(t.Context())
	t.Cleanup(func() { cancel(nil) })
	go func() { <-when; time.Sleep(20 * time.Millisecond); cancel(cause) }()
	return ctx
}

// As TestTheCallersCauseIsNoProofOfTheRequest's "a sibling's dial error,
// the POST taken", with the caller's cause a value == cannot compare (a
// multi-error): errors.Is never found it in the base's error, and the
// sibling's dial error read as this request's proof that nothing was sent.
func TestANonComparableCauseIsNoProof(t *testing.T) {
	siblingDial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	taken := make(chan struct{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		close(taken)
		<-r.Context().Done()
		return nil, context.Cause(r.Context())
	})
	var results otelretry.Results
	ctx := otelretry.WithResults(cancelCauseWhen(t, errorList{siblingDial}, taken), &results)
	_, err := otelretry.NewTransport(base).RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !results.OutcomeUnknown() {
		t.Errorf("err %v: want the outcome unknown (the base took the write)", err)
	}
}

// A sibling's unknown outcome in a cause == cannot compare, around which
// the POST's dial failed: the POST, which never left, claimed the
// sibling's unknown outcome.
func TestANonComparableCausesUnknownIsNotTheOperations(t *testing.T) {
	lost := otelretry.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, io.ErrUnexpectedEOF
	}), otelretry.WithDeadline(2*time.Second))
	_, siblingUnknown := lost.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
	if !errors.Is(siblingUnknown, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("setup: %v", siblingUnknown)
	}
	dialing := make(chan struct{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		close(dialing)
		<-r.Context().Done()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: context.Cause(r.Context())}
	})
	var results otelretry.Results
	ctx := otelretry.WithResults(cancelCauseWhen(t, errorList{siblingUnknown}, dialing), &results)
	_, err := otelretry.NewTransport(base).RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
	if errors.Is(err, otelretry.ErrOutcomeUnknown) || results.OutcomeUnknown() {
		t.Errorf("err %v: want the outcome known (the dial failed: nothing sent)", err)
	}
}

// decisions.md row 24: net/http's "server closed idle connection" proves the
// request never left, told by its type; beside the caller's cause, read
// through the view without it, its type was hidden and the POST ended
// unknown.
func TestServerClosedIdleAroundTheCallersCauseIsProof(t *testing.T) {
	for _, withCause := range []bool{false, true} {
		t.Run(fmt.Sprint("with the caller's cause: ", withCause), func(t *testing.T) {
			started := make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				close(started)
				<-r.Context().Done()
				idle := errors.New("http: server closed idle connection")
				if withCause {
					return nil, fmt.Errorf("%w; then %w", idle, context.Cause(r.Context()))
				}
				return nil, fmt.Errorf("%w; then %w", idle, r.Context().Err())
			})
			var results otelretry.Results
			ctx := otelretry.WithResults(cancelCauseWhen(t, errors.New("sibling failed"), started), &results)
			_, err := otelretry.NewTransport(base).RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
			if errors.Is(err, otelretry.ErrOutcomeUnknown) || results.OutcomeUnknown() {
				t.Errorf("err %v: want the outcome known (server closed idle connection: nothing sent)", err)
			}
		})
	}
}
