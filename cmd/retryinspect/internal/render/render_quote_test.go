// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// docs/retryinspect.md: the inspector "never repeats a secret (URLs ... in
// any attribute's value)". A URL whose query value holds a double quote
// (url.Parse accepts it and net/http sends it as written), or whose
// password does (as url.Parse's error prints it), was redacted in
// url.full but repeated by every report from another string attribute
// (retry.reason here), read as text: the quote ended the URL.
func TestAQuotedQueryValueOrPasswordIsNotRepeated(t *testing.T) {
	for _, leaked := range []string{
		`http://h.test/x?token="SECRET"`,
		`http://alice:SECRET"x@h.test/x`,
	} {
		at := span("t1", "a1", "op", 0, 80,
			str(string(attrs.OperationIDKey), "op-1"), str(string(attrs.RequestIDKey), "op-1/attempt-1"), num(string(attrs.AttemptKey), 1),
			str(string(attrs.HTTPRequestMethodKey), "GET"), str(string(attrs.ErrorClassKey), "timeout"),
			num(string(attrs.ElapsedMsKey), 80), num(string(attrs.RemainingMsKey), 400),
			str(string(attrs.DecisionKey), "stop"), str(string(attrs.ReasonKey), leaked))
		op := span("t1", "op", "", 0, 81,
			str(string(attrs.OperationIDKey), "op-1"), str(string(attrs.OutcomeKey), "max_attempts"),
			str(string(attrs.HTTPRequestMethodKey), "GET"), str(string(attrs.ServerAddressKey), "h.test"),
			num(string(attrs.ServerPortKey), 8080), num(string(attrs.AttemptsKey), 1),
			str(string(attrs.URLFullKey), "http://h.test:8080/x"), num(string(attrs.DeadlineMsKey), 400))
		r := inspect.Analyze([]model.Span{at, op})
		var text, page, js bytes.Buffer
		if err := Text(&text, r); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&page, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := JSON(&js, r); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct{ name, out string }{{"text", text.String()}, {"HTML", page.String()}, {"JSON", js.String()}} {
			if i := strings.Index(f.out, "SECRET"); i >= 0 {
				t.Errorf("%q: the %s report repeats a secret: %q", leaked, f.name, f.out[max(0, i-60):min(len(f.out), i+20)])
			}
		}
	}
}
