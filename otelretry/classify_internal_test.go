// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

func TestClassify(t *testing.T) {
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	read := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	cases := []struct {
		name      string
		err       error
		callerErr error
		want      attrs.ErrorClass
		neverSent bool
	}{
		{"deadline", context.DeadlineExceeded, nil, attrs.ErrorClassTimeout, false},
		{"net timeout", read(os.ErrDeadlineExceeded), nil, attrs.ErrorClassTimeout, false},
		{"dial timeout never sent", dial(os.ErrDeadlineExceeded), nil, attrs.ErrorClassTimeout, true},
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), nil, attrs.ErrorClassConnectionRefused, true},
		{"reset", read(os.NewSyscallError("read", syscall.ECONNRESET)), nil, attrs.ErrorClassConnectionReset, false},
		{"eof", fmt.Errorf("transport: %w", io.EOF), nil, attrs.ErrorClassConnectionReset, false},
		{"dns", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, nil, attrs.ErrorClassDNS, true},
		{"tls", tls.RecordHeaderError{Msg: "bad"}, nil, attrs.ErrorClassTLS, true},
		{"canceled", context.Canceled, nil, attrs.ErrorClassCanceled, false},
		{"other", errors.New("unsupported protocol scheme"), nil, attrs.ErrorClassOther, false},
		{"message is not read", errors.New("connection refused (but only in text)"), nil, attrs.ErrorClassOther, false},
		// net/http's unexported errServerClosedIdle: the server closed the
		// connection, which may have crossed the request. It proves the
		// request unsent only beside the trace of the connection it was met
		// on (attempt.closedIdleUnwritten), not by itself.
		{"server closed idle", errors.New("http: server closed idle connection"), nil, attrs.ErrorClassConnectionReset, false},
		{"server closed idle, wrapped", fmt.Errorf("base: %w", errors.New("http: server closed idle connection")), nil, attrs.ErrorClassConnectionReset, false},
		{"server closed idle, joined", errors.Join(errors.New("proxy: upstream gone"), errors.New("http: server closed idle connection")), nil, attrs.ErrorClassConnectionReset, false},
		{"server closed idle, two %w", fmt.Errorf("%w: %w", errors.New("proxy"), errors.New("http: server closed idle connection")), nil, attrs.ErrorClassConnectionReset, false},
		// The same close met by net/http's writer: the socket closed, which
		// a caller's cut does too.
		{"closed connection", &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}, nil, attrs.ErrorClassConnectionReset, false},
		{"its text in a message", fmt.Errorf("base: %s", "http: server closed idle connection"), nil, attrs.ErrorClassOther, false},
	}
	for _, tc := range cases {
		got := classify(tc.err)
		if got != tc.want {
			t.Errorf("%s: classify = %s, want %s", tc.name, got, tc.want)
		}
		if ns := neverSent(tc.err, got); ns != tc.neverSent {
			t.Errorf("%s: neverSent = %v, want %v", tc.name, ns, tc.neverSent)
		}
		if idle := serverClosedIdle(tc.err); idle != strings.HasPrefix(tc.name, "server closed idle") {
			t.Errorf("%s: serverClosedIdle = %v", tc.name, idle)
		}
	}
}
