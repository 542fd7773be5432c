// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// frameworkContext is a caller's own context.Context implementation (as
// gin.Context and similar framework contexts are). Its Done is user code:
// the first time it is called from the deadline context an answerContext
// makes, it tells entered (waiting until the test hears it: the call may
// come before the test listens) and waits for release.
type frameworkContext struct {
	context.Context
	entered chan struct{}
	release chan struct{}
	armed   chan struct{} // closed by the test's Classifier
	once    sync.Once
}

func (c *frameworkContext) Done() <-chan struct{} {
	select {
	case <-c.armed:
		buf := make([]byte, 1<<16)
		if strings.Contains(string(buf[:runtime.Stack(buf, false)]), "answerContext).deadlineContext") {
			c.once.Do(func() {
				c.entered <- struct{}{}
				<-c.release
			})
		}
	default:
	}
	return c.Context.Done()
}

// No lock of otelretry's is held across user code (docs/hedging.md, "Hooks
// and telemetry in a race"; TestNoUserCodeRunsUnderALock). A Classifier
// starts a call with Answer.Request.Context() that outlives it (which
// Answer.Request's doc allows: the context ends once the hooks returned).
// Asking that context for Done makes its deadline context under
// answerContext.mu, and context.WithDeadline calls the caller's context's
// Done (user code) there. While that user code runs, the operation cannot
// end its hooks' context (answerContext.end takes the same lock): the
// caller's RoundTrip is held by user code on another goroutine, and if
// that Done waits for the operation to end, both wait for ever. The
// context is made under no lock now, and TestNoUserCodeRunsUnderALock
// takes a context's derivations for user code.
func TestAnswerContextHoldsNoLockAcrossTheCallersContext(t *testing.T) {
	caller := &frameworkContext{
		Context: context.Background(),
		entered: make(chan struct{}),
		release: make(chan struct{}),
		armed:   make(chan struct{}),
	}
	hookCallDone := make(chan struct{})
	classify := func(a otelretry.Answer) otelretry.Classification {
		ctx := a.Request.Context()
		close(caller.armed)
		go func() { // the hook's own call, outliving it
			defer close(hookCallDone)
			<-ctx.Done()
		}()
		<-caller.entered // its context's Done is running the caller's code
		return otelretry.Classification{}
	}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithClassifier(classify))
	req, err := http.NewRequestWithContext(caller, http.MethodGet, "http://127.0.0.1:1/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	rtDone := make(chan struct{})
	go func() {
		defer close(rtDone)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-rtDone:
	case <-time.After(5 * time.Second): // a bound on a deadlock, not a timing assertion
		t.Error("RoundTrip did not return while the caller context's Done, called by a hook's goroutine, was running: answerContext holds its lock across user code")
	}
	close(caller.release)
	<-rtDone
	<-hookCallDone
}
