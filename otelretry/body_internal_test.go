// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"io"
	"net/http"
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
