// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"slices"
	"testing"
)

// valuesIn reads a header in every spelling without writing to the
// caller's: the canonical spelling's slice may have room past its length
// (a caller's own backing array), which appending the other spellings'
// values to must not overwrite.
func TestValuesInLeavesTheCallersHeaderAsItWas(t *testing.T) {
	backing := []string{"key-1", "keep"}
	h := http.Header{"Idempotency-Key": backing[:1], "idempotency-key": {"key-2"}}
	got := valuesIn(h, "idempotency-key")
	if want := []string{"key-1", "key-2"}; !slices.Equal(got, want) {
		t.Errorf("valuesIn = %q, want %q", got, want)
	}
	if backing[1] != "keep" {
		t.Errorf("the caller's backing array was written: %q", backing)
	}
	if want := []string{"key-1"}; !slices.Equal(h["Idempotency-Key"], want) {
		t.Errorf("the caller's header is %q, want %q", h["Idempotency-Key"], want)
	}
}
