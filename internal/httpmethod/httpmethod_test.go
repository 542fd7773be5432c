// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package httpmethod_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/httpmethod"
)

// A method outside the standard set is written as the HTTP semantic
// conventions ask: http.request.method=_OTHER, with the method as sent in
// http.request.method_original. Method names are case-sensitive.
func TestAppendWritesOtherWithTheOriginal(t *testing.T) {
	for method, want := range map[string][]attribute.KeyValue{
		"GET":   {attrs.HTTPRequestMethodKey.String("GET")},
		"PATCH": {attrs.HTTPRequestMethodKey.String("PATCH")},
		"":      {attrs.HTTPRequestMethodKey.String("GET")},
		"PURGE": {attrs.HTTPRequestMethodKey.String("_OTHER"), attrs.HTTPRequestMethodOriginalKey.String("PURGE")},
		"get":   {attrs.HTTPRequestMethodKey.String("_OTHER"), attrs.HTTPRequestMethodOriginalKey.String("get")},
	} {
		kv := []attribute.KeyValue{attrs.AttemptKey.Int(1)}
		got := httpmethod.Append(kv, method)
		if !slices.Equal(got[:1], kv) || !slices.Equal(got[1:], want) {
			t.Errorf("Append(%q) = %v, want %v after the attempt", method, got, want)
		}
		if v := httpmethod.Value(method); v != want[0].Value.AsString() {
			t.Errorf("Value(%q) = %q, want %q", method, v, want[0].Value.AsString())
		}
	}
}
