// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

type gateKey struct{}

// unsentBase answers POST /order: the first call is held until release
// says its status; later calls get 503.
type unsentBase struct {
	mu      sync.Mutex
	keys    []string
	entered chan struct{}
	release chan int
}

func (b *unsentBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b.mu.Lock()
	n := len(b.keys)
	b.keys = append(b.keys, r.Header.Get("Idempotency-Key"))
	b.mu.Unlock()
	status := http.StatusServiceUnavailable
	if n == 0 {
		b.entered <- struct{}{}
		status = <-b.release
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// keyMemory's godoc (otelretry/idempotency.go): the context keeps "the
// idempotency keys ... for the writes made under it that did not succeed
// ... so that a layer above that sends one again reuses its key: its
// earlier try may have been applied". A write is sent (504: maybe
// applied) while a second operation of the same request, begun beside it,
// takes a new key and never sends anything (its PrepareAttemptFunc fails).
// That never-sent key replaced the maybe-applied one, and the layer
// above's repeat of the write went out under a key the server never saw
// (a reviewer's find): a key no server saw is not kept now.
func TestAnUnsentOperationsKeyDoesNotReplaceAMaybeAppliedOne(t *testing.T) {
	b := &unsentBase{entered: make(chan struct{}), release: make(chan int)}
	prepEntered, prepRelease := make(chan struct{}), make(chan struct{})
	prepare := func(req *http.Request, _ int) error {
		if req.Context().Value(gateKey{}) != nil {
			prepEntered <- struct{}{}
			<-prepRelease
			return errors.New("token refresh failed")
		}
		return nil
	}
	tr := otelretry.NewTransport(b, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
		otelretry.WithoutBudget(), otelretry.WithMaxAttempts(1), otelretry.WithPrepareAttempt(prepare))
	c := &http.Client{Transport: tr}
	ctx := otelretry.WithOperationID(t.Context(), "job-1")
	post := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/order", bytes.NewReader([]byte(`{"order":1}`)))
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}

	first := make(chan error, 1)
	go func() { first <- post(ctx) }()
	<-b.entered // the write is on the wire under its key
	second := make(chan error, 1)
	go func() { second <- post(context.WithValue(ctx, gateKey{}, true)) }()
	<-prepEntered // the other operation took its key, and waits in its hook
	b.release <- http.StatusGatewayTimeout
	<-first // the write may have been applied: its key is kept
	close(prepRelease)
	if err := <-second; err == nil {
		t.Fatal("the unsent operation did not fail")
	}
	// The layer above sends the write again.
	_ = post(ctx)

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.keys) != 2 {
		t.Fatalf("%d calls, want 2", len(b.keys))
	}
	if b.keys[1] != b.keys[0] {
		t.Errorf("the repeat of a write answered 504 (maybe applied) was sent under key %s, not the write's %s: an operation that never sent anything replaced it", b.keys[1], b.keys[0])
	}
}

type panicGateKey struct{}

// A key no server saw is not kept, also when a panic ends its operation: a
// PrepareAttemptFunc that panics on the first attempt sends nothing, and
// its operation's fresh key does not replace the key of the write beside
// it, answered 504 (maybe applied), which the next repeat takes (a
// reviewer's find: a panic kept every key, as if the write had been sent).
func TestAPanicBeforeTheFirstCallKeepsNoKey(t *testing.T) {
	b := &unsentBase{entered: make(chan struct{}), release: make(chan int)}
	prepEntered, prepRelease := make(chan struct{}), make(chan struct{})
	prepare := func(req *http.Request, _ int) error {
		if req.Context().Value(panicGateKey{}) != nil {
			prepEntered <- struct{}{}
			<-prepRelease
			panic("token source crashed")
		}
		return nil
	}
	tr := otelretry.NewTransport(b, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
		otelretry.WithoutBudget(), otelretry.WithMaxAttempts(1), otelretry.WithPrepareAttempt(prepare))
	c := &http.Client{Transport: tr}
	ctx := otelretry.WithOperationID(t.Context(), "job-1")
	post := func(ctx context.Context) (err error, panicked any) {
		defer func() { panicked = recover() }()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/order", bytes.NewReader([]byte(`{"order":1}`)))
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err, nil
	}

	first := make(chan error, 1)
	go func() { err, _ := post(ctx); first <- err }()
	<-b.entered
	second := make(chan any, 1)
	go func() { _, p := post(context.WithValue(ctx, panicGateKey{}, true)); second <- p }()
	<-prepEntered
	b.release <- http.StatusGatewayTimeout
	<-first
	close(prepRelease)
	if p := <-second; p == nil {
		t.Fatal("the second operation did not panic")
	}
	_, _ = post(ctx)

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.keys) != 2 {
		t.Fatalf("%d calls, want 2", len(b.keys))
	}
	if b.keys[1] != b.keys[0] {
		t.Errorf("the repeat of a write answered 504 (maybe applied) went out under key %s, not the write's %s: an operation whose PrepareAttemptFunc panicked before sending anything replaced it", b.keys[1], b.keys[0])
	}
}

// The zero IdempotencyKey has no header name: WithIdempotencyKeys is
// ignored, as otel.Handle reports, and a write answered 503 is not resent
// (no key makes it repeatable) (IdempotencyKey's godoc; a reviewer's
// remark: the godoc did not say).
func TestTheZeroIdempotencyKeyLeavesKeysOff(t *testing.T) {
	handled := captureOtelErrors(t)
	var calls int
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		if len(r.Header) != 0 {
			t.Errorf("headers sent: %v, want none", r.Header)
		}
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{}), otelretry.WithoutBudget())
	req, _ := http.NewRequest(http.MethodPost, "http://api.test/orders", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if calls != 1 {
		t.Errorf("%d calls, want 1 (no key: the write is not repeatable)", calls)
	}
	if errs := handled(); len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), "WithIdempotencyKeys") {
		t.Errorf("otel.Handle got %v, want WithIdempotencyKeys reported", errs)
	}
}
