// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package spantest

import (
	"cmp"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// Attr returns the value of key on s and whether it is set.
func Attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// Operations returns the operation spans: those with retry.outcome and no
// retry.attempt.
func Operations(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	return filter(spans, func(s sdktrace.ReadOnlySpan) bool {
		_, outcome := Attr(s, attrs.OutcomeKey)
		_, attempt := Attr(s, attrs.AttemptKey)
		return outcome && !attempt
	})
}

// Attempts returns the attempt spans ordered by retry.attempt.
func Attempts(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	out := filter(spans, func(s sdktrace.ReadOnlySpan) bool {
		_, ok := Attr(s, attrs.AttemptKey)
		return ok
	})
	slices.SortStableFunc(out, func(a, b sdktrace.ReadOnlySpan) int {
		x, _ := Attr(a, attrs.AttemptKey)
		y, _ := Attr(b, attrs.AttemptKey)
		return cmp.Compare(x.AsInt64(), y.AsInt64())
	})
	return out
}

// Named returns the spans called name.
func Named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	return filter(spans, func(s sdktrace.ReadOnlySpan) bool { return s.Name() == name })
}

// Children returns the spans whose parent is p.
func Children(spans []sdktrace.ReadOnlySpan, p sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	return filter(spans, func(s sdktrace.ReadOnlySpan) bool {
		return s.Parent().SpanID() == p.SpanContext().SpanID()
	})
}

func filter(spans []sdktrace.ReadOnlySpan, keep func(sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}
