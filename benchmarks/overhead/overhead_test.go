// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"net/http"
	"testing"
)

// BenchmarkRoundTrip measures each case over the in-memory base (canned
// 200): the wrappers' overhead alone.
func BenchmarkRoundTrip(b *testing.B) {
	for _, c := range cases {
		b.Run("case="+c.name, func(b *testing.B) {
			base := newMemTransport(http.StatusOK)
			run(b, c.build(b, base, "http://api.example.test/v1/items?id=42", success), base, 1)
		})
	}
}

// BenchmarkRoundTripLoopback measures each case over a real keep-alive
// http.Transport to an httptest server on 127.0.0.1.
func BenchmarkRoundTripLoopback(b *testing.B) {
	srv := newLoopbackServer()
	defer srv.Close()
	for _, c := range cases {
		b.Run("case="+c.name, func(b *testing.B) {
			base := newLoopbackTransport()
			defer base.CloseIdleConnections()
			run(b, c.build(b, base, srv.URL+"/v1/items?id=42", success), nil, 1)
		})
	}
}

// BenchmarkRoundTripParallel measures otelretry's cases and the peer with
// its bounds over the in-memory base, with operations in flight on every
// core (b.RunParallel; -cpu sets how many): what a Transport's shared
// state costs once its operations contend for it (the budget, the hedge
// rate, the lock of the queue that keeps its attempts' bounds).
func BenchmarkRoundTripParallel(b *testing.B) {
	for _, c := range cases {
		if c.name != "otelretry-noop" && c.name != "otelretry-sdk" && c.name != "retryablehttp-deadline" {
			continue
		}
		b.Run("case="+c.name, func(b *testing.B) {
			op := c.build(b, newMemTransport(http.StatusOK), "http://api.example.test/v1/items?id=42", success).op
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRetry3 measures operations whose attempts get 503, 503, 200
// from the in-memory base, with zero backoff in every case.
func BenchmarkRetry3(b *testing.B) {
	for _, c := range cases {
		if c.noRetry {
			continue // otelhttp alone does not retry.
		}
		b.Run("case="+c.name, func(b *testing.B) {
			base := newMemTransport(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK)
			run(b, c.build(b, base, "http://api.example.test/v1/items?id=42", retrying), base, 3)
		})
	}
}

// run loops the case's operation, then checks that the base saw calls
// base calls per operation and reports spans/op for the SDK cases.
func run(b *testing.B, c built, base *memTransport, calls int64) {
	b.ReportAllocs()
	var before, spansBefore int64
	if base != nil {
		before = base.calls.Load()
	}
	if c.spans != nil {
		spansBefore = c.spans.ended.Load()
	}
	n := 0
	for b.Loop() {
		if err := c.op(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	if base != nil {
		if got := base.calls.Load() - before; got != calls*int64(n) {
			b.Fatalf("base saw %d calls for %d operations, want %d each", got, n, calls)
		}
	}
	if c.spans != nil && n > 0 {
		b.ReportMetric(float64(c.spans.ended.Load()-spansBefore)/float64(n), "spans/op")
	}
}
