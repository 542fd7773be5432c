// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// ParseBytes reads "a size such as 512KiB, 64MiB, 2GiB or 1000 (bytes)":
// a number and at most one unit. A "B" between the number and a binary
// unit ("1BKiB") is no such size; the unit was cut first and the B after
// it, so the value was read as 1 KiB (a reviewer's find).
func TestParseBytesRefusesAByteUnitBeforeABinaryUnit(t *testing.T) {
	var accepted []string
	cases := 0
	for _, n := range []string{"1", "64", "512", "1000"} {
		for _, u := range []string{"KiB", "MiB", "GiB"} {
			for _, junk := range []string{"B", "BB"} {
				in := n + junk + u
				cases++
				if got, err := ParseBytes(in); err == nil {
					accepted = append(accepted, in+"="+strconv.FormatInt(got, 10))
				}
			}
		}
	}
	if len(accepted) > 0 {
		t.Errorf("%d of %d malformed sizes accepted: %s", len(accepted), cases, strings.Join(accepted, ", "))
	}
}

// A size past the largest int64 at every unit is refused "too large"
// (as 9999999999GiB is), never told to "want a positive size": it is
// one (a reviewer's find). ParseLookback makes the same distinction.
func TestParseBytesOverflowSaysTooLarge(t *testing.T) {
	var wrong []string
	cases := 0
	for _, u := range []string{"", "B", "KiB", "MiB", "GiB"} {
		for _, n := range []string{
			"9223372036854775808", // MaxInt64+1
			"18446744073709551616",
			"99999999999999999999",
			strings.Repeat("9", 40),
			"0" + strconv.FormatUint(math.MaxUint64, 10),
		} {
			in := n + u
			cases++
			_, err := ParseBytes(in)
			if err == nil || !strings.Contains(err.Error(), "too large") {
				wrong = append(wrong, in+": "+errText(err))
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d overflowing sizes not refused as too large:\n%s", len(wrong), cases, strings.Join(wrong, "\n"))
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A sign is no part of a size: "+64MiB" was read (strconv.ParseInt takes
// a plus; a reviewer's find).
func TestParseBytesRefusesASign(t *testing.T) {
	for _, in := range []string{"+64MiB", "+1", "+1B", "+1000", "+2GiB", "-1", " 1"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d; want refused", in, got)
		}
	}
}
