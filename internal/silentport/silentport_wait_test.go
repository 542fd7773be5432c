// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package silentport

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Serve's cleanup waits until every serve returned, as its godoc says: a
// serve still finishing after the connection closed (here an hour of the
// bubble's fake clock, which cannot pass while the cleanups run) has
// returned by the time the cleanups registered before Serve run.
func TestServeCleanupWaitsForEveryServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned atomic.Bool
		t.Cleanup(func() { // runs after Serve's cleanup
			if !returned.Load() {
				t.Error("Serve's cleanup returned before its serve did")
			}
		})
		accepted := make(chan struct{})
		addr := Serve(t, func(c net.Conn) {
			close(accepted)
			io.Copy(io.Discard, c) // until the cleanup closes c
			time.Sleep(time.Hour)
			returned.Store(true)
		})
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() }) // runs before Serve's cleanup
		<-accepted
	})
}

// Listen's cleanup closes the connections it accepted: a client that
// never closes its side finds its connection closed, and the test ends.
func TestListenCleanupClosesWhatItAccepted(t *testing.T) {
	var c net.Conn
	t.Run("listen", func(t *testing.T) {
		var err error
		if c, err = net.Dial("tcp", Listen(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	})
	defer c.Close()
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read %d bytes, %v, from a closed silent port; want none and an error", n, err)
	}
}
