// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

func TestPlanAt(t *testing.T) {
	p := plan{{name: "warmup", ops: 2}, {name: "tail", ops: 3}, {name: "brownout", ops: 2}}
	if p.total() != 7 {
		t.Fatalf("total %d, want 7", p.total())
	}
	for op, want := range []int{0, 0, 1, 1, 1, 2, 2, 2} { // op 7 is past the end
		if got := p.at(op); got != want {
			t.Errorf("operation %d in phase %d, want %d", op, got, want)
		}
	}
}

// The brownout schedule: every request of a brownout operation, first or
// hedge, is stalled; the tail phase stalls 0.7 %.
func TestBrownoutStallsEveryRequest(t *testing.T) {
	o := defaultOptions()
	o.warmup, o.tail, o.brownout = 100, 20_000, 2_000
	s := newHandler(o.plan(), 3)
	floor := time.Duration(o.service.stallFactor) * o.service.fastMin
	for op := o.warmup + o.tail; op < s.plan.total(); op++ {
		for k := 1; k <= 2; k++ {
			if d := s.serviceTime(op, k); d < floor {
				t.Fatalf("brownout operation %d request %d served in %v, under %v", op, k, d, floor)
			}
		}
	}
	stalls := 0
	for op := o.warmup; op < o.warmup+o.tail; op++ {
		if s.serviceTime(op, 1) >= floor {
			stalls++
		}
	}
	// 0.7 % of 20,000: σ ≈ 12.
	if stalls < 90 || stalls > 190 {
		t.Errorf("%d stalls among 20,000 tail operations, want about 140", stalls)
	}
}

// The server's busy time is the service time actually spent: all of it
// for a request served to the end, until the client went away for one it
// abandoned. In virtual time, so both are exact.
func TestServerCountsBusyTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := defaultOptions()
		o.warmup, o.tail, o.brownout = 0, 1, 1
		s := newHandler(o.plan(), 1)
		serve := func(op int, cancelAfter time.Duration) *httptest.ResponseRecorder {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAfter > 0 {
				time.AfterFunc(cancelAfter, cancel)
			}
			rec := httptest.NewRecorder()
			s.handle(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/op/"+strconv.Itoa(op), nil))
			return rec
		}

		rec := serve(0, 0)
		if want := s.serviceTime(0, 1); time.Duration(s.busy[0].Load()) != want || rec.Body.String() != "ok" {
			t.Errorf("served to the end: busy %v, body %q; want %v and ok", time.Duration(s.busy[0].Load()), rec.Body.String(), want)
		}
		serve(0, 0) // a second request of the same operation: a hedge
		if want := s.serviceTime(0, 1) + s.serviceTime(0, 2); time.Duration(s.busy[0].Load()) != want || s.requests[0].Load() != 2 {
			t.Errorf("two requests: busy %v, requests %d; want %v and 2", time.Duration(s.busy[0].Load()), s.requests[0].Load(), want)
		}

		// The brownout operation stalls for at least 200 ms; its client
		// leaves after 20 ms.
		rec = serve(1, 20*time.Millisecond)
		if got := time.Duration(s.busy[1].Load()); got != 20*time.Millisecond || rec.Body.Len() != 0 {
			t.Errorf("abandoned: busy %v, body %q; want 20ms and nothing (its service time was %v)", got, rec.Body.String(), s.serviceTime(1, 1))
		}

		rec = serve(9, 0)
		if rec.Code != http.StatusNotFound || s.stray.Load() != 1 {
			t.Errorf("an operation out of range: %d, stray %d; want 404 and 1", rec.Code, s.stray.Load())
		}
	})
}

// The server notes when the first two requests of an operation arrived:
// the gap is the delay the second (a hedge) was sent after, as the server
// sees it. In virtual time, so it is exact.
func TestServerNotesWhenTheHedgeArrived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := defaultOptions()
		o.warmup, o.tail, o.brownout = 0, 2, 1
		s := newHandler(o.plan(), 1)
		serve := func(op int) {
			s.handle(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/op/"+strconv.Itoa(op), nil))
		}
		first := time.Now()
		go serve(0)
		time.Sleep(7 * time.Millisecond)
		go serve(0) // the hedge, 7 ms after the first
		time.Sleep(time.Millisecond)
		go serve(0) // a third request changes nothing
		serve(1)
		synctest.Wait() // every request arrived (some still served)
		if d, ok := s.hedgeAfter(0); !ok || d != 7*time.Millisecond {
			t.Errorf("operation 0: hedge after %v (%v), want 7ms", d, ok)
		}
		if d, ok := s.hedgeAfter(1); ok {
			t.Errorf("operation 1 sent one request, yet a hedge after %v", d)
		}
		if got := time.Duration(s.arrived[0][0].Load()); got != first.Sub(s.epoch) {
			t.Errorf("first request at %v, want %v", got, first.Sub(s.epoch))
		}
	})
}
