// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/internal/errtree"
)

// A typed nil *http3.Error in the chain says nothing and is read past:
// quic-go's Unwrap dereferences its receiver, and Evidence's first walk
// (for the connection's close) went through it with errors.As and
// panicked (a reviewer's find). The rejection after it is read, and a
// connection's close after it still proves nothing.
func TestATypedNilInTheChainIsReadPast(t *testing.T) {
	rejected := &quic.StreamError{StreamID: 4, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestRejected), Remote: true}
	closed := &quic.ApplicationError{Remote: true, ErrorCode: quic.ApplicationErrorCode(http3.ErrCodeRequestRejected)}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.Join((*http3.Error)(nil), rejected), true},
		{fmt.Errorf("x: %w", errors.Join((*http3.Error)(nil), rejected)), true},
		{errors.Join((*http3.Error)(nil), closed, rejected), false},
		{(*http3.Error)(nil), false},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%v: Evidence panicked: %v", tc.err, p)
				}
			}()
			if _, ok := h3.Evidence(tc.err); ok != tc.want {
				t.Errorf("%v: evidence %v, want %v", tc.err, ok, tc.want)
			}
		}()
	}
}

// A large tree is read whole, as errors.As reads it: a connection's close
// after 300 errors was never reached (the walk stopped at 256), and a
// rejection before them was taken as proof (a reviewer's find). A tree
// past what the walk reads is taken as holding a close: no proof.
func TestALargeTreeIsReadToItsEndOrProvesNothing(t *testing.T) {
	rejected := &quic.StreamError{StreamID: 4, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestRejected), Remote: true}
	closed := &quic.ApplicationError{Remote: true, ErrorCode: quic.ApplicationErrorCode(http3.ErrCodeRequestRejected)}
	for _, n := range []int{300, errtree.Nodes} {
		eofs := make([]error, n)
		for i := range eofs {
			eofs[i] = io.EOF
		}
		if _, ok := h3.Evidence(errors.Join(rejected, errors.Join(eofs...), closed)); ok {
			t.Errorf("%d errors before the connection's close: the rejection before them taken as proof", n)
		}
		if _, ok := h3.Evidence(errors.Join(rejected, errors.Join(eofs...))); ok != (n < errtree.Nodes) {
			t.Errorf("%d errors and no close: proof %v, want %v", n, ok, n < errtree.Nodes)
		}
	}
}
