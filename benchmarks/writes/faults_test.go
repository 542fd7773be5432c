// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// The schedule is a pure function of the seed, the write and the request's
// ordinal, and draws each fault at its rate.
func TestFaultScheduleIsSeededAndKeepsItsRates(t *testing.T) {
	rates := faultRates{lost: 0.04, unavailable: 0.04, slow: 0.02, refused: 0.02}
	var drawn [faultKinds]int
	const n = 200000
	for i := range n {
		f := rates.at(1, i/4, i%4+1)
		if again := rates.at(1, i/4, i%4+1); again != f {
			t.Fatalf("write %d, request %d: %s, then %s", i/4, i%4+1, f, again)
		}
		drawn[f]++
	}
	for f, want := range map[fault]float64{faultLost: 0.04, faultUnavailable: 0.04, faultSlow: 0.02, faultRefused: 0.02, faultNone: 0.88} {
		if got := float64(drawn[f]) / n; math.Abs(got-want) > 0.003 {
			t.Errorf("%s drawn %.4f of requests, want %.2f", f, got, want)
		}
	}
	differ := 0
	for i := range 1000 {
		if rates.at(1, i, 1) != rates.at(2, i, 1) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("seeds 1 and 2 give the same schedule")
	}
	for _, f := range []fault{faultNone, faultLost, faultUnavailable, faultSlow, faultRefused} {
		if parseFault(f.String()) != f {
			t.Errorf("%s does not read back", f)
		}
	}
}

// A refused request never leaves: the network dials a port nothing
// listens on and returns the kernel's refusal; any other request goes on
// with its fault named.
func TestNetworkRefusesForRealAndNamesTheOtherFaults(t *testing.T) {
	addr, err := closedAddr()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.Header.Get(faultHeader))
		return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Request: r}, nil
	})
	n := newNetwork(base, addr, faultRates{refused: 1}, 1)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/writes/3", strings.NewReader("{}"))
	if _, err := n.RoundTrip(req); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want the kernel's ECONNREFUSED", err)
	}
	n.rates = faultRates{lost: 1}
	if _, err := n.RoundTrip(req); err != nil || len(got) != 1 || got[0] != "lost" {
		t.Fatalf("err %v, faults sent %q", err, got)
	}
	if seen := n.requests(3); len(seen) != 2 || seen[0] != seenRefused || seen[1] != http.StatusCreated {
		t.Fatalf("seen %v", seen)
	}
}

func TestLostAnswerResends(t *testing.T) {
	for _, tc := range []struct {
		seen []int
		want int
	}{
		{nil, 0},
		{[]int{201}, 0},
		{[]int{seenRefused, 201}, 0},
		{[]int{seenFailed, 201}, 1},
		{[]int{503, seenRefused, 201}, 2},
		{[]int{seenRefused, seenFailed, 409, 201}, 2},
		{[]int{seenFailed}, 0},
		{[]int{seenFailed, 409, 201}, 2},
		{[]int{seenFailed, 409, 409, 409, 201}, 2},
		{[]int{503, 409, 409, seenFailed, 409, 201}, 4},
		{[]int{seenFailed, 201, 201}, 1},
	} {
		if got := lostAnswerResends(tc.seen); got != tc.want {
			t.Errorf("lostAnswerResends(%v) = %d, want %d", tc.seen, got, tc.want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
