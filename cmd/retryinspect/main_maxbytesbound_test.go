// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strconv"
	"testing"
)

// -max-bytes takes any positive size up to the largest int64 (ParseBytes
// refuses only larger ones): at the largest, the byte read past the limit
// to tell a larger input overflowed it, and every input read as empty ("no
// spans in ...", exit 2; a reviewer's find). The file is read as under the
// default limit.
func TestMaxBytesLargestSizeReadsTheFile(t *testing.T) {
	clean := stdoutFile(t, readTimeline())
	wantCode, wantOut, wantErr := run3([]string{clean})
	for _, size := range []string{strconv.FormatInt(math.MaxInt64, 10), strconv.FormatInt(math.MaxInt64, 10) + "B", strconv.FormatInt(math.MaxInt64-1, 10)} {
		code, out, stderr := run3([]string{clean, "-max-bytes", size})
		if code != wantCode || out != wantOut || stderr != wantErr {
			t.Errorf("-max-bytes %s: exit %d (want %d), stdout %d bytes (want %d), stderr %q (want %q)", size, code, wantCode, len(out), len(wantOut), stderr, wantErr)
		}
	}
}
