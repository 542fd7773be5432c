// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package errtree

import "reflect"

// Nodes is how many errors of a tree Walk visits at most: a whole tree
// of any size an error carries in practice (errors.As reads it all), and
// an Unwrap that returns its own error not followed for ever.
const Nodes = 10000

// Walk calls visit on err and the errors of its tree, as errors.As walks
// them, until visit returns false; it reports whether the walk went to
// its end: false when visit stopped it, and when it was cut at Nodes (a
// reader that must not miss an error, the one that takes a proof back,
// reads a cut walk as one that found it). A typed nil says nothing: it is
// neither visited nor unwrapped.
func Walk(err error, visit func(error) bool) bool {
	left := Nodes
	return walk(err, visit, &left)
}

func walk(err error, visit func(error) bool, left *int) bool {
	for ; err != nil && !IsNil(err); err = unwrapOne(err) {
		if *left--; *left < 0 {
			return false
		}
		if !visit(err) {
			return false
		}
		if u, ok := err.(interface{ Unwrap() []error }); ok {
			for _, inner := range u.Unwrap() {
				if !walk(inner, visit, left) {
					return false
				}
			}
			return true
		}
	}
	return true
}

func unwrapOne(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}

// IsNil reports whether err is a typed nil of a kind that can be nil
// (a pointer, map, slice, func, channel or interface).
func IsNil(err error) bool {
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}
