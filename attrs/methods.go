// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs

import (
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"
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
// takes; any other method becomes _OTHER, as the HTTP semantic
// conventions ask (see MethodValue). Each call returns a new slice.
func Methods() []string { return slices.Clone(methods[:]) }

// SafeMethods lists the methods RFC 9110 defines as safe (§9.2.1: GET,
// HEAD, OPTIONS, TRACE), and so idempotent without any declaration: a
// client may send them again. Each call returns a new slice.
func SafeMethods() []string { return slices.Clone(methods[:safeMethods]) }

// MethodValue is the value of http.request.method for method: method
// itself when it is one of Methods, else _OTHER. Method names are
// case-sensitive (RFC 9110), so "get" is _OTHER too; an empty method is
// GET, as net/http sends it. It is the one rule for every channel: the
// metrics label it alone, spans and log records through AppendMethod.
func MethodValue(method string) string {
	switch {
	case method == "":
		return http.MethodGet
	case slices.Contains(methods[:], method):
		return method
	}
	return MethodOther
}

// MethodOther is the value http.request.method takes for a method outside
// Methods (semconv's HTTPRequestMethodOther); the method as sent is then
// http.request.method_original.
const MethodOther = "_OTHER"

// AppendMethod appends method's http.request.method (MethodValue) to kv
// and, when that is _OTHER, http.request.method_original with the method
// as sent, as the HTTP semantic conventions ask.
func AppendMethod(kv []attribute.KeyValue, method string) []attribute.KeyValue {
	v := MethodValue(method)
	kv = append(kv, HTTPRequestMethodKey.String(v))
	if v == MethodOther {
		kv = append(kv, HTTPRequestMethodOriginalKey.String(method))
	}
	return kv
}
