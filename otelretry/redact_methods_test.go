// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/internal/scripted"
)

// unwrapPanics prints, but its Unwrap panics.
type unwrapPanics struct{}

func (unwrapPanics) Error() string { return "unwrap panics" }
func (unwrapPanics) Unwrap() error { panic("Unwrap panicked") }

// asPanics prints and holds no typed nil, but its Is and As panic.
type asPanics struct{}

func (asPanics) Error() string { return "as panics" }
func (asPanics) Is(error) bool { panic("Is panicked") }
func (asPanics) As(any) bool   { panic("As panicked") }

// timeoutPanics is a net.Error whose Timeout and Temporary panic.
type timeoutPanics struct{}

func (timeoutPanics) Error() string   { return "timeout panics" }
func (timeoutPanics) Timeout() bool   { panic("Timeout panicked") }
func (timeoutPanics) Temporary() bool { panic("Temporary panicked") }

// An error whose own methods panic is read as the caller's errors.Is
// would read it, and its panic goes on as a base's would (the package
// doc's Results): the panic reaches the caller and every span is ended.
// Only a typed nil in the tree and an error that cannot print itself are
// kept from harm (a reviewer's find: the line was nowhere written).
func TestAnErrorWhoseMethodsPanicHasItsPanicGoOn(t *testing.T) {
	for _, err := range []error{unwrapPanics{}, asPanics{}, timeoutPanics{}} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Err: err}})
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%T: RoundTrip returned; want its method's panic to go on", err)
					}
				}()
				h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			}()
			if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended || ended < 2 {
				t.Errorf("%T: %d spans started, %d ended; want all ended (operation and attempt)", err, started, ended)
			}
		})
	}
}
