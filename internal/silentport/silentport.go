// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package silentport

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Listen opens a silent port on 127.0.0.1 and returns its address. The
// test's cleanup closes it and every connection it accepted, and waits
// until it accepts no more.
func Listen(t testing.TB) string {
	t.Helper()
	return Serve(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // read the request, never answer
}

// Serve opens a port on 127.0.0.1 that serves each connection it accepts
// with serve, on a goroutine of its own, and returns its address. The
// test's cleanup closes it and every connection it accepted, and waits
// until it accepts no more and every serve returned.
func Serve(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		conns   []net.Conn
		serving sync.WaitGroup
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serving.Go(func() { serve(c) })
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		serving.Wait()
	})
	return l.Addr().String()
}
