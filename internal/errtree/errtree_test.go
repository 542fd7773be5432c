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
	if Walk(selfWrap{}, func(error) bool { n++; return true }); n != Nodes {
		t.Errorf("a cycle visited %d times, want %d", n, Nodes)
	}
	n = 0
	done := Walk(errors.Join(io.EOF, io.ErrUnexpectedEOF), func(e error) bool { n++; return e != io.EOF })
	if done || n != 2 {
		t.Errorf("stopped at io.EOF: done %v after %d visits, want false after 2 (the join, then io.EOF)", done, n)
	}
}
