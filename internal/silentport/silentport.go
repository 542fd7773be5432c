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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
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
			go io.Copy(io.Discard, c) // read the request, never answer
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
