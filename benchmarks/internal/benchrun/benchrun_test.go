// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package benchrun

import "testing"

func TestRecoveryIsTheWindowAfterTheLastFailure(t *testing.T) {
	for _, c := range []struct {
		name   string
		fails  []bool
		from   int
		wantOK bool
	}{
		{"none fails", []bool{false, false, false}, 0, true},
		{"fails until 2", []bool{true, true, false, false}, 2, true},
		{"fails again later", []bool{true, false, true, false}, 3, true},
		{"the last fails", []bool{false, false, true}, 3, false},
		{"no windows", nil, 0, false},
	} {
		var asked []int
		from, ok := Recovery(len(c.fails), func(i int) (bool, bool) { asked = append(asked, i); return true, c.fails[i] })
		if from != c.from || ok != c.wantOK {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, from, ok, c.from, c.wantOK)
		}
		for i, a := range asked {
			if a != i {
				t.Fatalf("%s: windows asked in the order %v, want 0, 1, ...", c.name, asked)
			}
		}
	}
}
