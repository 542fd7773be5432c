// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The pool never holds more than its total, however reservations race.
func TestBodyPoolCapUnderRace(t *testing.T) {
	p := &bodyPool{perRequest: 10, total: 35}
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := int64(0)
	for range 16 {
		wg.Go(func() {
			for range 500 {
				if !p.reserve(10) {
					continue
				}
				u := p.used.Load()
				mu.Lock()
				peak = max(peak, u)
				mu.Unlock()
				p.free(10)
			}
		})
	}
	wg.Wait()
	if peak > 35 || p.used.Load() != 0 {
		t.Errorf("peak %d (cap 35), left %d (want 0)", peak, p.used.Load())
	}
}

// A buffer is freed when its last holder lets go: the operation, or the
// reading goroutine that outlived it.
func TestBufferedBodyFreedByLastHolder(t *testing.T) {
	p := &bodyPool{perRequest: 10, total: 10}
	if !p.reserve(4) {
		t.Fatal("no room")
	}
	b := &bufferedBody{data: make([]byte, 4), pool: p}
	b.holders.Store(2)
	b.letGo()
	if p.used.Load() != 4 {
		t.Errorf("freed before the last holder let go: used %d", p.used.Load())
	}
	b.letGo()
	if p.used.Load() != 0 {
		t.Errorf("used %d after both let go, want 0", p.used.Load())
	}
}

// TestAHedgePreparationOutlivingItsOperationHoldsTheBuffer: a hedge's
// PrepareAttemptFunc (a signer hashing the body) still runs when the first
// attempt wins and RoundTrip returns; it reads the buffer's bytes, whose
// reservation holds until its copy is closed (it was given back when the
// operation ended).
func TestAHedgePreparationOutlivingItsOperationHoldsTheBuffer(t *testing.T) {
	const size = 1024
	type seen struct {
		n    int
		used int64
	}
	out := make(chan seen, 1)
	base := baseFunc(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		time.Sleep(20 * time.Millisecond) // the first attempt answers after the hedge delay
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: req}, nil
	})
	var tr *Transport
	returned := make(chan struct{})
	tr = NewTransport(base, WithoutBudget(), WithBodyBuffer(size, size),
		WithHedging(Hedging{Delay: 5 * time.Millisecond, MaxShare: 1}),
		WithPrepareAttempt(func(req *http.Request, attempt int) error {
			if attempt < 2 {
				return nil
			}
			<-returned // RoundTrip returned: the operation ended
			b, _ := io.ReadAll(req.Body)
			out <- seen{len(b), tr.bodies.used.Load()}
			return nil
		}))
	payload := bytes.Repeat([]byte("s"), size)
	ctx := WithIntent(context.Background(), Intent{Repeatable: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/x", io.NopCloser(bytes.NewReader(payload)))
	req.ContentLength = size
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	close(returned)
	select {
	case s := <-out:
		t.Logf("after RoundTrip returned, the hedge's preparation read %d bytes of the buffer; pool reserved %d", s.n, s.used)
		if s.n == size && s.used < size {
			t.Errorf("a buffered body of %d bytes is read after its reservation was given back (reserved %d): the pool undercounts the buffers in use", size, s.used)
		}
	case <-time.After(5 * time.Second):
		t.Skip("the hedge was not prepared")
	}
}

// A base that breaks the RoundTripper contract (it never closes the body
// it is given) holds a buffer's reservation only until the copy it dropped
// is collected: the pool does not shrink for good.
func TestABufferCopyDroppedUnclosedIsLetGoWhenCollected(t *testing.T) {
	const size = 1024
	base := baseFunc(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body) // read, never closed
		return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	})
	tr := NewTransport(base, WithoutBudget(), WithBodyBuffer(size, size))
	ctx := WithIntent(context.Background(), Intent{Repeatable: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/x", io.NopCloser(bytes.NewReader(make([]byte, size))))
	req.ContentLength = size
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if used := tr.bodies.used.Load(); used != size {
		t.Fatalf("reserved %d once the operation ended, want %d: the base's copy is not closed yet", used, size)
	}
	for i := 0; i < 100 && tr.bodies.used.Load() != 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // cleanups run on a goroutine of their own
	}
	if used := tr.bodies.used.Load(); used != 0 {
		t.Errorf("reserved %d after the dropped copy was collected, want 0", used)
	}
}

// A buffer every holder let go of (its operation ended, its copies
// closed) gives no copy: one would take a holder from none and free the
// reservation a second time on its Close.
func TestAReleasedBufferGivesNoCopy(t *testing.T) {
	var pool bodyPool
	pool.init(10, 10)
	if !pool.reserve(10) {
		t.Fatal("reserve")
	}
	b := &bufferedBody{data: make([]byte, 10), pool: &pool}
	b.holders.Store(1) // the operation
	c, err := b.getBody()
	if err != nil {
		t.Fatal(err)
	}
	b.letGo() // the operation ends
	c.Close() // its last copy closed: the reservation given back
	if _, err := b.getBody(); !errors.Is(err, errBufferReleased) {
		t.Errorf("a released buffer's getBody: %v, want errBufferReleased", err)
	}
	if used := pool.used.Load(); used != 0 {
		t.Errorf("pool used %d, want 0", used)
	}
}
