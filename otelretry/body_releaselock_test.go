// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// callbackContext is a caller's own context type: its Value runs onValue
// once it is armed, on whatever goroutine asks it.
type callbackContext struct {
	context.Context
	armed   atomic.Bool
	onValue func()
}

func (c *callbackContext) Value(key any) any {
	if c.armed.CompareAndSwap(true, false) {
		c.onValue()
	}
	return c.Context.Value(key)
}

// The caller's context is the caller's code, and no user code runs under
// a lock of the package's. Reading the body to EOF releases the attempt,
// and the release cancels the attempt's context, which asks the caller's
// context for its Done and Value: a Close from another goroutine, while
// that user code runs, must not wait for it. The release ran under the
// body's sync.Once, which the Close waited on; it is a flag now.
func TestResponseBodyReleaseRunsNoCallerContextCodeUnderALock(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	client := &http.Client{Transport: otelretry.NewTransport(base)}
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &callbackContext{Context: inner}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	ranUnderOnce := false
	ctx.onValue = func() {
		// The caller's code, run by the release: another goroutine
		// closes the body meanwhile.
		go func() {
			resp.Body.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(5 * time.Second): // bound on a deadlock, not a timing assertion
			ranUnderOnce = true
		}
	}
	ctx.armed.Store(true)
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	<-closed // returns once the Once is released, either way
	if ctx.armed.Load() {
		t.Fatal("the release did not ask the caller's context for a value: the test proves nothing (context's cancel changed?)")
	}
	if ranUnderOnce {
		t.Error("a Close of the response body waited on the caller's context Value, run by the release of the attempt at EOF under the body's sync.Once: user code under a lock of otelretry's")
	}
}
