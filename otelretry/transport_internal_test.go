// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// countingBody counts what was read from it and whether it was closed.
type countingBody struct {
	r      io.Reader
	read   int
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { b.closed = true; return nil }

// bareAttempt is an attempt with a context and nothing else.
func bareAttempt() (*attempt, context.Context) {
	a := &attempt{}
	ctx, cancel := context.WithCancelCause(context.Background())
	a.cancel = cancel
	a.state.Store(stateAnswered)
	a.timer = time.AfterFunc(time.Hour, a.expire)
	a.timer.Stop()
	return a, ctx
}

func TestDiscardDrainsAtMostMaxDrainAndCloses(t *testing.T) {
	for _, size := range []int{0, 100, maxDrain - 1, maxDrain, maxDrain + 1, 10 * maxDrain} {
		body := &countingBody{r: strings.NewReader(strings.Repeat("x", size))}
		a, ctx := bareAttempt()
		discard(&http.Response{Body: body}, a, time.Hour)
		released := ctx.Err() == context.Canceled
		if want := min(size, maxDrain); body.read != want || !body.closed || !released {
			t.Errorf("size %d: read %d (want %d), closed %v, released %v", size, body.read, want, body.closed, released)
		}
	}
	for _, resp := range []*http.Response{nil, {}, {Body: http.NoBody}} { // no response, no body, empty body
		a, ctx := bareAttempt()
		discard(resp, a, time.Hour)
		if ctx.Err() == nil {
			t.Errorf("%v: attempt not released", resp)
		}
	}
}

// Without a pause there is no time to drain: the body is closed unread.
func TestDiscardWithoutPauseClosesUnread(t *testing.T) {
	body := &countingBody{r: strings.NewReader("abc")}
	a, _ := bareAttempt()
	discard(&http.Response{Body: body}, a, 0)
	if body.read != 0 || !body.closed {
		t.Fatalf("read %d, closed %v; want 0, true", body.read, body.closed)
	}
}

// The carrier writes what http.Header.Set writes, into a copy made on the
// first write only.
func TestHeaderCarrierCopiesOnFirstWrite(t *testing.T) {
	caller := http.Header{"X-Caller": {"1"}}
	req := &http.Request{Header: caller}
	c := headerCarrier{req: req}
	if c.Get("x-caller") != "1" || !reflect.DeepEqual(c.Keys(), []string{"X-Caller"}) {
		t.Fatalf("Get/Keys do not read the caller's header")
	}
	want := caller.Clone()
	for _, kv := range [][2]string{{"traceparent", "00-a-b-01"}, {"tracestate", "k=v"}, {"baggage", "b=1"}, {"x-b3-traceid", "abc"}, {"Uber-Trace-Id", "u"}} {
		c.Set(kv[0], kv[1])
		want.Set(kv[0], kv[1])
	}
	if !reflect.DeepEqual(req.Header, want) {
		t.Errorf("header = %v, want %v", req.Header, want)
	}
	if len(caller) != 1 {
		t.Errorf("the caller's header was written: %v", caller)
	}
	empty := &http.Request{} // a nil header gets a fresh one
	(&headerCarrier{req: empty}).Set("traceparent", "x")
	if empty.Header.Get("Traceparent") != "x" {
		t.Errorf("nil header: %v", empty.Header)
	}
}
