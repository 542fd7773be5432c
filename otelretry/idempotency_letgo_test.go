// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// gateBase answers POST /order calls with statuses from a script, holding
// the call numbered hold until release says its status, and every other
// request 200.
type gateBase struct {
	mu      sync.Mutex
	keys    []string // of /order calls, in order
	hold    int
	entered chan string
	release chan int
	status  []int // for /order calls other than the held one, in order
}

func (b *gateBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	key := r.Header.Get("Idempotency-Key")
	status := http.StatusOK
	if r.URL.Path == "/order" {
		b.mu.Lock()
		n := len(b.keys)
		b.keys = append(b.keys, key)
		if n != b.hold && len(b.status) > 0 {
			status, b.status = b.status[0], b.status[1:]
		}
		b.mu.Unlock()
		if n == b.hold {
			b.entered <- key
			status = <-b.release
		}
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

func postOrder(t *testing.T, c *http.Client, ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(`{"order":1}`)))
	if err != nil {
		panic(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// keyMemory's godoc (otelretry/idempotency.go): "a repeat that does not
// succeed keeps it as the newest, unless a repeat beside it succeeded"
// and "An operation that succeeds lets its key go, so that a later write
// of the same request is a new one". Two repeats of a lost write take its
// key; one succeeds; the job goes on with more than maxRememberedKeys
// (1024) other successful writes under the same id while the other
// repeat is in flight; that repeat then fails. A later write of the same
// request must be a new one (a new key). It took the key the success let
// go, once the bounded list of keys let go had forgotten it, and a server
// would answer it with the old write's stored answer, the new write never
// applied (a reviewer's find; the memory now knows a key was let go for as
// long as a repeat holds it).
func TestAKeyLetGoStaysLetGoAfterManyOtherSuccesses(t *testing.T) {
	b := &gateBase{hold: 1, entered: make(chan string), release: make(chan int),
		status: []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusOK}}
	tr := otelretry.NewTransport(b, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithoutBudget(), otelretry.WithMaxAttempts(1))
	c := &http.Client{Transport: tr}
	ctx := otelretry.WithOperationID(t.Context(), "job-1")
	const order = "http://api.test/order"

	// The first try is lost (503): its key is kept for a repeat.
	if s := postOrder(t, c, ctx, order); s != http.StatusServiceUnavailable {
		t.Fatalf("first try: status %d", s)
	}
	// A repeat in flight (held in the base)...
	held := make(chan int, 1)
	go func() { held <- postOrder(t, c, ctx, order) }()
	<-b.entered
	// ...and one beside it that succeeds: the write is done.
	if s := postOrder(t, c, ctx, order); s != http.StatusOK {
		t.Fatalf("second repeat: status %d", s)
	}
	// The job goes on: other writes, all successful.
	for i := range 1030 {
		if s := postOrder(t, c, ctx, "http://api.test/other/"+strconv.Itoa(i)); s != http.StatusOK {
			t.Fatalf("other write %d: status %d", i, s)
		}
	}
	// The held repeat fails now.
	b.release <- http.StatusServiceUnavailable
	if s := <-held; s != http.StatusServiceUnavailable {
		t.Fatalf("held repeat: status %d", s)
	}
	// A later write of the same request: a new one.
	if s := postOrder(t, c, ctx, order); s != http.StatusOK {
		t.Fatalf("new write: status %d", s)
	}
	b.mu.Lock()
	keys := slices.Clone(b.keys)
	b.mu.Unlock()
	if len(keys) != 4 {
		t.Fatalf("%d /order calls, want 4", len(keys))
	}
	if keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("the repeats took keys %q and %q, want the first try's %q", keys[1], keys[2], keys[0])
	}
	if keys[3] == keys[0] {
		t.Errorf("the write after the success took the key %s the success let go (a repeat beside it failed %d other successes later): a server answers it from its store, the new write is never applied", keys[3], 1030)
	}
}
