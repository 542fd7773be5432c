// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// Every way the peer closes the connection under a request is
// connection_reset, and none of them proves the request unsent: a body cut
// short (io.ErrUnexpectedEOF), a broken pipe, an aborted connection, each
// bare and as net/http wraps them.
func TestEveryPeerCloseIsAConnectionReset(t *testing.T) {
	read := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	write := func(err error) error {
		return &net.OpError{Op: "write", Net: "tcp", Err: &os.SyscallError{Syscall: "write", Err: err}}
	}
	cases := []struct {
		name string
		err  error
	}{
		{"unexpected EOF", io.ErrUnexpectedEOF},
		{"unexpected EOF, wrapped", fmt.Errorf("net/http: reading body: %w", io.ErrUnexpectedEOF)},
		{"unexpected EOF in a read", read(io.ErrUnexpectedEOF)},
		{"broken pipe", write(syscall.EPIPE)},
		{"connection aborted", read(&os.SyscallError{Syscall: "read", Err: syscall.ECONNABORTED})},
		{"connection reset", read(&os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET})},
		{"EOF", fmt.Errorf("transport: %w", io.EOF)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			class := classify(tc.err)
			if class != attrs.ErrorClassConnectionReset {
				t.Errorf("classify(%v) = %q, want %q", tc.err, class, attrs.ErrorClassConnectionReset)
			}
			if neverSent(tc.err, class) {
				t.Errorf("neverSent(%v) = true: a closed connection proves nothing", tc.err)
			}
		})
	}
}
