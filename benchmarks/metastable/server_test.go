// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

const ms = time.Millisecond

// doneAt admits n requests with ctx now and returns, once they are all
// done, when each finished (offsets from start).
func doneAt(t *testing.T, b *backend, start time.Time, ctxs ...context.Context) []time.Duration {
	t.Helper()
	jobs := make([]*job, len(ctxs))
	for i, ctx := range ctxs {
		j, ok := b.admit(ctx)
		if !ok {
			t.Fatalf("request %d refused", i)
		}
		jobs[i] = j
	}
	at := make([]time.Duration, len(jobs))
	for i, j := range jobs {
		<-j.done
		at[i] = time.Since(start)
		// Let the other requests that end at this instant be seen at it.
		synctest.Wait()
	}
	return at
}

func background(n int) []context.Context {
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i] = context.Background()
	}
	return ctxs
}

func TestBackendServesInOrderAtItsCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(4, 10*ms, 100)
		b.run()
		defer b.close()
		got := doneAt(t, b, time.Now(), background(9)...)
		want := []time.Duration{10 * ms, 10 * ms, 10 * ms, 10 * ms, 20 * ms, 20 * ms, 20 * ms, 20 * ms, 30 * ms}
		if !slices.Equal(got, want) {
			t.Fatalf("done at %v, want %v", got, want)
		}
		if b.served.Load() != 9 || b.refused.Load() != 0 || b.abandoned.Load() != 0 {
			t.Fatalf("served %d, refused %d, abandoned %d; want 9, 0, 0", b.served.Load(), b.refused.Load(), b.abandoned.Load())
		}
	})
}

func TestBackendRefusesOnlyAboveItsQueuesBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(1, 10*ms, 2)
		b.run()
		defer b.close()
		if _, ok := b.admit(context.Background()); !ok {
			t.Fatal("first request refused")
		}
		synctest.Wait() // the worker holds it: the queue is empty
		for i := range 2 {
			if _, ok := b.admit(context.Background()); !ok {
				t.Fatalf("request %d refused with %d queued, bound 2", i+2, i)
			}
		}
		if _, ok := b.admit(context.Background()); ok {
			t.Fatal("a request above the bound was queued")
		}
		if b.refused.Load() != 1 {
			t.Fatalf("refused %d, want 1", b.refused.Load())
		}
	})
}

// A request whose client has gone is served all the same, in its turn,
// and its service time counted as abandoned work.
func TestBackendFinishesAbandonedRequestsAndCountsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(1, 10*ms, 100)
		b.run()
		defer b.close()
		gone, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*ms, cancel)
		got := doneAt(t, b, time.Now(), context.Background(), gone, context.Background())
		if want := []time.Duration{10 * ms, 20 * ms, 30 * ms}; !slices.Equal(got, want) {
			t.Fatalf("done at %v, want %v: the abandoned request keeps its turn and its time", got, want)
		}
		if b.served.Load() != 3 || b.abandoned.Load() != 1 {
			t.Fatalf("served %d, abandoned %d; want 3 and 1", b.served.Load(), b.abandoned.Load())
		}
	})
}

// During the trigger only the active workers take requests; the others
// finish the one they hold and wait for its end.
func TestBackendTriggerLeavesOnlyTheActiveWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(4, 10*ms, 100)
		b.trigger(100*ms, 300*ms, 1)
		start := time.Now()
		b.run()
		defer b.close()
		// Four requests started 5 ms before the trigger end 5 ms into it.
		time.Sleep(95 * ms)
		got := doneAt(t, b, start, background(4)...)
		if want := []time.Duration{105 * ms, 105 * ms, 105 * ms, 105 * ms}; !slices.Equal(got, want) {
			t.Fatalf("done at %v, want %v", got, want)
		}
		// 30 requests at 150 ms: one worker serves 15 by 300 ms, then four
		// serve the other 15 in 40 ms.
		time.Sleep(45 * ms)
		got = doneAt(t, b, start, background(30)...)
		for i, at := range got {
			want := 150*ms + time.Duration(i+1)*10*ms
			if i >= 15 {
				want = 300*ms + time.Duration((i-15)/4+1)*10*ms
			}
			if at != want {
				t.Fatalf("request %d done at %v, want %v (all: %v)", i, at, want, got)
			}
		}
	})
}

// A late timer delays one answer, never the worker's capacity: with every
// timer 3 ms late, the worker still ends a request every 10 ms, each seen
// 3 ms after its scheduled end, not 13 ms after the previous one.
func TestBackendKeepsItsScheduleWhenItsTimersAreLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(1, 10*ms, 100)
		b.late = 3 * ms
		b.run()
		defer b.close()
		got := doneAt(t, b, time.Now(), background(10)...)
		for i, at := range got {
			if want := time.Duration(i+1)*10*ms + 3*ms; at != want {
				t.Fatalf("request %d done at %v, want %v (all: %v)", i, at, want, got)
			}
		}
	})
}

func TestBackendCloseReturnsTheQueuedAndStopsItsWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackend(2, 10*ms, 100)
		b.run()
		for range 5 {
			b.admit(context.Background())
		}
		synctest.Wait()
		if q := b.close(); q != 3 {
			t.Fatalf("close: %d queued, want 3 (two being served)", q)
		}
		if _, ok := b.admit(context.Background()); ok {
			t.Fatal("a closed backend queued a request")
		}
	})
}

// Over HTTP: 200 when served, 503 at once above the bound, and a client
// that gives up leaves its request queued and served, counted abandoned.
func TestServerOverLoopback(t *testing.T) {
	b := newBackend(1, 50*ms, 1)
	b.run()
	s := newServer(b, 3)
	defer s.close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(ctx context.Context, op int) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url(op), nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Op 0 holds the worker for 50 ms; op 1 waits in the queue and gives up
	// after 10 ms; op 2 comes while op 1 is still queued and is refused.
	first := make(chan int)
	go func() { code, _ := get(context.Background(), 0); first <- code }()
	eventually(t, func() bool { return s.attempts[0].Load() == 1 && queued(b) == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*ms)
	defer cancel()
	gone := make(chan error)
	go func() { _, err := get(ctx, 1); gone <- err }()
	eventually(t, func() bool { return queued(b) == 1 })
	if code, err := get(context.Background(), 2); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("above the bound: %d, %v; want 503", code, err)
	}
	if code := <-first; code != http.StatusOK {
		t.Fatalf("served: %d, want 200", code)
	}
	if err := <-gone; err == nil {
		t.Fatal("the client that gave up got an answer")
	}
	eventually(t, func() bool { return b.served.Load() == 2 })
	if b.abandoned.Load() != 1 || b.refused.Load() != 1 {
		t.Fatalf("abandoned %d, refused %d; want 1 and 1", b.abandoned.Load(), b.refused.Load())
	}
	for op, want := range []int32{1, 1, 1} {
		if got := s.attempts[op].Load(); got != want {
			t.Errorf("op %d: %d requests counted, want %d", op, got, want)
		}
	}
}

func queued(b *backend) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// eventually waits for cond, at most 5 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(ms) {
		if time.Now().After(end) {
			t.Fatal("condition not met within 5 s")
		}
	}
}
