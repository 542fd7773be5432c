// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package httpmethod is the one rule for a request's method on every
// channel otelretry writes (spans, log records, the slog record, metrics),
// as the HTTP semantic conventions ask: a method outside the standard set
// (attrs.Methods) is http.request.method=_OTHER, with the method as sent
// in http.request.method_original. The vocabulary (the keys, the values
// and _OTHER) is package attrs'; the rule is an implementation, so it is
// no export of attrs.
package httpmethod

import (
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
)

// standard is attrs.Methods, read once: Value is on the recording path.
var standard = attrs.Methods()

// Value is the value of http.request.method for method: method itself
// when it is one of attrs.Methods, else attrs.MethodOther. Method names
// are case-sensitive (RFC 9110), so "get" is _OTHER too; an empty method
// is GET, as net/http sends it. The metrics label it alone, spans and log
// records through Append.
func Value(method string) string {
	switch {
	case method == "":
		return http.MethodGet
	case slices.Contains(standard, method):
		return method
	}
	return attrs.MethodOther
}

// Append appends method's http.request.method (Value) to kv and, when
// that is _OTHER, http.request.method_original with the method as sent.
func Append(kv []attribute.KeyValue, method string) []attribute.KeyValue {
	v := Value(method)
	kv = append(kv, attrs.HTTPRequestMethodKey.String(v))
	if v == attrs.MethodOther {
		kv = append(kv, attrs.HTTPRequestMethodOriginalKey.String(method))
	}
	return kv
}
