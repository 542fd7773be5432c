// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"testing"
)

// nilAsError prints without its receiver but reads it in As, as an
// error whose As looks at its fields does.
type nilAsError struct{ code int }

func (e *nilAsError) Error() string { return "as error" }
func (e *nilAsError) As(any) bool   { return e.code != 0 }

// quietMulti holds many errors and prints only its own text.
type quietMulti struct{ errs []error }

func (q quietMulti) Error() string   { return "several reads failed" }
func (q quietMulti) Unwrap() []error { return q.errs }

// A typed nil past the 256 errors safeError looks at is still read past:
// the GET whose first attempt failed so is retried and answered (a
// reviewer's find: a tree too large to read whole was taken for one
// without a nil, where errors.As reads it all).
func TestATypedNilPastTheWalksBoundIsReadPast(t *testing.T) {
	aGETFailedOnceIsRetried(t, func() error {
		errs := make([]error, 0, 301)
		for range 300 {
			errs = append(errs, io.ErrUnexpectedEOF)
		}
		return quietMulti{append(errs, (*nilAsError)(nil))}
	})
}
