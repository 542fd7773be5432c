// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package errtree

import (
	"errors"
	"io"
	"testing"
)

// selfWrap unwraps to itself: a cycle errors.As would follow for ever.
type selfWrap struct{}

func (selfWrap) Error() string   { return "self" }
func (e selfWrap) Unwrap() error { return e }

// The walk stops: at visit's false, and at Nodes on a cycle.
func TestWalkStops(t *testing.T) {
	n := 0
	if done := Walk(selfWrap{}, func(error) bool { n++; return true }); n != Nodes || done {
		// A walk cut short is no walk to the end (a reviewer's find: it
		// said it was).
		t.Errorf("a cycle visited %d times, want %d, and reported done %v, want false", n, Nodes, done)
	}
	big := make([]error, 300)
	for i := range big {
		big[i] = io.EOF
	}
	n = 0
	if done := Walk(errors.Join(big...), func(error) bool { n++; return true }); n != 301 || !done {
		// Not cut at 256 (a reviewer's find: a finite tree read partway).
		t.Errorf("a join of 300 visited %d errors, done %v; want 301, true", n, done)
	}
	n = 0
	done := Walk(errors.Join(io.EOF, io.ErrUnexpectedEOF), func(e error) bool { n++; return e != io.EOF })
	if done || n != 2 {
		t.Errorf("stopped at io.EOF: done %v after %d visits, want false after 2 (the join, then io.EOF)", done, n)
	}
}
