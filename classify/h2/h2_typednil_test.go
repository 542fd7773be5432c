// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A typed nil in the chain (here a nil *net.OpError or *url.Error, whose
// Unwrap reads its receiver) neither panics nor hides the refusal after
// it: h3's Evidence read past one, h2's went through errors.As and
// panicked (a reviewer's find).
func TestATypedNilInTheChainIsReadPast(t *testing.T) {
	refused := http2.StreamError{StreamID: 3, Code: http2.ErrCodeRefusedStream}
	for _, err := range []error{
		errors.Join((*net.OpError)(nil), refused),
		fmt.Errorf("x: %w", errors.Join((*url.Error)(nil), refused)),
		(*net.OpError)(nil),
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%T in chain: Evidence panicked: %v", err, p)
				}
			}()
			_, found := h2.Evidence(err)
			if want := err != error((*net.OpError)(nil)); found != want {
				t.Errorf("%v: refusal found %v, want %v", err, found, want)
			}
			h2.Classify(otelretry.Answer{Err: err})
		}()
	}
}

// A large chain is read whole, as errors.As reads it: a refusal below 300
// wrappers, or after 300 errors in a join, was missed (the walk stopped at
// 256; a reviewer's find).
func TestALargeChainIsReadToItsEnd(t *testing.T) {
	refused := http2.StreamError{StreamID: 3, Code: http2.ErrCodeRefusedStream}
	var chain error = refused
	eofs := make([]error, 300)
	for i := range eofs {
		chain = fmt.Errorf("layer: %w", chain)
		eofs[i] = io.EOF
	}
	for name, err := range map[string]error{"300 wrappers": chain, "a join of 301": errors.Join(append(eofs, refused)...)} {
		if _, ok := h2.Evidence(err); !ok {
			t.Errorf("%s: no REFUSED_STREAM found; errors.As finds it", name)
		}
	}
}
