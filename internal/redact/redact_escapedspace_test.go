// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// errors.Join (or any multi-line error) in a JSON log line: the line break
// after a URL is JSON's escaped `\n` (or `\t`, `\r`). It is whitespace of
// the string the URL is in, so it ends the URL as a raw line break does at
// depth 0. Decoding Text's output must give Text of the decoded input:
// the text after the URL ("next", "Post") must survive, and a path must not
// turn the line break into "%5Cn".
func TestAJSONEscapedLineBreakEndsAURL(t *testing.T) {
	for _, msg := range []string{
		"GET http://h.test/x?a=1\nnext line",
		"GET http://h.test/x?a=1\tnext",
		"GET http://h.test/x\nnext line",
		errors.Join(
			fmt.Errorf("GET %s failed", "http://h.test/x?a=1"),
			&url.Error{Op: "Post", URL: "https://h2.test/y?token=SECRET", Err: errors.New("EOF")},
		).Error(),
	} {
		sameAtEveryDepth(t, msg, redact.Text(msg), 2)
	}
}
