// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
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
