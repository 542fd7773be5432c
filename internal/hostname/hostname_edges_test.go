// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package hostname_test

import (
	"testing"

	"github.com/otelretry/otelretry-go/internal/hostname"
)

// One's edges: "." is the root and keeps its dot; every ASCII capital,
// Z included, is lowered; an IPv4-mapped address with a zone keeps its
// zone (only a zoneless one is unmapped).
func TestOneAtItsEdges(t *testing.T) {
	for in, want := range map[string]string{
		".":                     ".",
		"ZZ.TEST":               "zz.test",
		"aZ.test":               "az.test",
		"::ffff:127.0.0.1%eth0": "::ffff:127.0.0.1%eth0",
		"::ffff:127.0.0.1":      "127.0.0.1",
	} {
		if got := hostname.One(in); got != want {
			t.Errorf("One(%q) = %q, want %q", in, got, want)
		}
	}
}
