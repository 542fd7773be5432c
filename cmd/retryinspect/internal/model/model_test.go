// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package model

import "testing"

func TestNormalizeIDs(t *testing.T) {
	for _, tc := range []struct {
		in, trace, span string
		traceOK, spanOK bool
	}{
		{"", "", "", true, true},
		{"0000000000000000", "", "", true, true},
		{"00000000000000000000000000000000", "", "", true, false},
		{"D269B633813FC60C", "0000000000000000d269b633813fc60c", "d269b633813fc60c", true, true},
		{"1", "00000000000000000000000000000001", "0000000000000001", true, true},
		{"5b8efff798038103d269b633813fc60c", "5b8efff798038103d269b633813fc60c", "", true, false},
		{"xyz", "", "", false, false},
		{"AAE=", "", "", false, false},
	} {
		if got, ok := TraceID(tc.in); got != tc.trace || ok != tc.traceOK {
			t.Errorf("TraceID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.trace, tc.traceOK)
		}
		if got, ok := SpanID(tc.in); got != tc.span || ok != tc.spanOK {
			t.Errorf("SpanID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.span, tc.spanOK)
		}
	}
}
