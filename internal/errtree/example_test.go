// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package errtree_test

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/otelretry/otelretry-go/internal/errtree"
)

func ExampleWalk() {
	// errors.As would call Unwrap on the nil *net.OpError and panic.
	err := fmt.Errorf("read: %w", errors.Join((*net.OpError)(nil), io.ErrUnexpectedEOF))
	errtree.Walk(err, func(e error) bool {
		fmt.Printf("%T\n", e)
		return true
	})
	// Output:
	// *fmt.wrapError
	// *errors.joinError
	// *errors.errorString
}
