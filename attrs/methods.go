// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs

import (
	"net/http"
	"slices"
)

// methods is the one list of the standard HTTP methods, the safe ones
// first: the first safeMethods of them.
var methods = [...]string{
	http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
	http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodConnect,
}

const safeMethods = 4

// Methods lists the standard HTTP methods (RFC 9110, and PATCH from RFC
// 5789), the safe ones first. They are the values http.request.method
// takes; any other method becomes _OTHER, with the method as sent in
// http.request.method_original, as the HTTP semantic conventions ask.
// Each call returns a new slice.
func Methods() []string { return slices.Clone(methods[:]) }

// SafeMethods lists the methods RFC 9110 defines as safe (§9.2.1: GET,
// HEAD, OPTIONS, TRACE), and so idempotent without any declaration: a
// client may send them again. Each call returns a new slice.
func SafeMethods() []string { return slices.Clone(methods[:safeMethods]) }

// MethodOther is the value http.request.method takes for a method outside
// Methods (semconv's HTTPRequestMethodOther); the method as sent is then
// http.request.method_original.
const MethodOther = "_OTHER"
