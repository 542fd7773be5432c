// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"sync"
	"testing"
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
