// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package cowmap

import (
	"sync"
	"sync/atomic"
)

// Map is a copy-on-write map. The zero value is empty and ready to use.
type Map[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex
	// Limit bounds the number of stored keys; 0 means no limit. Past it,
	// Get returns a fresh value without storing it.
	Limit int
}

// Get returns the value for k, creating and storing it with create on the
// first call for k. create runs under a lock, at most once per stored key.
func (c *Map[K, V]) Get(k K, create func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	var n int
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
		n = len(*old)
	}
	v := create()
	if c.Limit > 0 && n >= c.Limit {
		return v
	}
	next := make(map[K]V, n+1)
	if old != nil {
		for key, val := range *old {
			next[key] = val
		}
	}
	next[k] = v
	c.m.Store(&next)
	return v
}

// Lookup returns the value stored for k, if any, without creating one.
func (c *Map[K, V]) Lookup(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// Len returns the number of stored keys.
func (c *Map[K, V]) Len() int {
	if m := c.m.Load(); m != nil {
		return len(*m)
	}
	return 0
}
