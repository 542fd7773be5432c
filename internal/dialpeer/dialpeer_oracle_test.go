// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package dialpeer_test

import (
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/internal/dialpeer"
)

// The oracle must be able to fail: a key that merges every host into one
// dependency, or splits every URL apart, disagrees with what net/http
// dials, and Check says so, at most limit times.
func TestCheckFindsAWrongKey(t *testing.T) {
	merge := func(*url.URL) string { return "one" }
	split := func(u *url.URL) string { return u.String() }
	// Check reports one pair per pair of keys: the merging key, one.
	for name, c := range map[string]struct {
		key    func(*url.URL) string
		limits []int
	}{"merge": {merge, []int{1}}, "split": {split, []int{1, 3}}} {
		key := c.key
		for _, limit := range c.limits {
			bad, n := dialpeer.Check(dialpeer.URLs(), key, limit)
			if len(bad) != limit {
				t.Errorf("%s key, limit %d: %d mismatches over %d URLs, want %d", name, limit, len(bad), n, limit)
			}
			for _, m := range bad {
				if (m.PeerA == m.PeerB) == (m.KeyA == m.KeyB) {
					t.Errorf("%s key: reported mismatch %+v agrees", name, m)
				}
			}
		}
	}
}

// An A-label in any label, not only the first, is left out (documented):
// the key keeps it apart from its Unicode spelling.
func TestPeerLeavesOutAnALabelInAnyLabel(t *testing.T) {
	for _, addr := range []string{"xn--bcher-kva.test:80", "www.xn--bcher-kva.test:80", "b\u00fccher.test:80"} {
		if p, ok := dialpeer.Peer(addr); ok {
			t.Errorf("Peer(%q) = %q, true; want not ok", addr, p)
		}
	}
}
