// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// A method outside the standard set is recorded as http.request.method
// _OTHER with the method as sent in http.request.method_original: the
// report shows the method as sent, verbatim (methods are case-sensitive,
// so "get" is not GET and is no safe method), and still treats it as a
// write. Spans written before _OTHER carry the method itself.
func TestMethodOutsideTheStandardSet(t *testing.T) {
	for _, tc := range []struct {
		recorded, original, want string
	}{
		{"_OTHER", "PURGE", "PURGE"},
		{"_OTHER", "get", "get"},
		{"GET", "", "GET"},
		{"purge", "", "PURGE"}, // before _OTHER
	} {
		op := operationSpan("t", 1, 0, "op", 1, 1000)
		at := minimalAttempt("t", 2, 1, "op", 1, 0)
		for _, s := range []*model.Span{&op, &at} {
			s.Attributes = slices.DeleteFunc(s.Attributes, func(a model.Attribute) bool { return a.Key == keyMethod })
			s.Attributes = append(s.Attributes, kv(keyMethod, model.String(tc.recorded)))
			if tc.original != "" {
				s.Attributes = append(s.Attributes, kv(keyMethodOriginal, model.String(tc.original)))
			}
		}
		r := Analyze([]model.Span{op, at})
		if got := r.Operations[0].Method; got != tc.want {
			t.Errorf("%s/%q: operation method %q, want %q", tc.recorded, tc.original, got, tc.want)
		}
		if got := r.Operations[0].Attempts[0].Method; got != tc.want {
			t.Errorf("%s/%q: attempt method %q, want %q", tc.recorded, tc.original, got, tc.want)
		}
	}
}
