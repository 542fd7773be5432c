// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"strings"
	"testing"
)

// A lookback takes no sign either: "+3000000h", a window past the longest,
// was told to be "a positive duration" where an unsigned one is "longer
// than the longest window" (a reviewer's find); "+1h" was read.
func TestParseLookbackRefusesASign(t *testing.T) {
	for _, in := range []string{"+1h", "+2d", "+3000000h", "+99999999999999999999h", "-1h"} {
		if got, err := ParseLookback(in); err == nil || !strings.Contains(err.Error(), "want a positive duration") {
			t.Errorf("ParseLookback(%q) = %v, %v; want refused", in, got, err)
		}
	}
	if _, err := ParseLookback("3000000h"); err == nil || !strings.Contains(err.Error(), "longer than the longest window") {
		t.Errorf("ParseLookback(3000000h): %v; want too long", err)
	}
}
