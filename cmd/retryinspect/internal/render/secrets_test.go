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

// No report repeats a URL's password or query value, whatever attribute a
// producer put it in: a URL in one string attribute at a time (an error
// class, a decision, a reason, an outcome, server.address, peer.service,
// the method, a span's name), a userinfo in server.address, and the
// service.name of the server's span under an attempt (a dependency's name
// when no peer attribute gives one), reach the
// text, HTML and JSON reports sanitized. Before, the values read as
// headline, dependency name or table cells came out raw, and a URL holding
// a double quote kept what followed it.
func TestNoReportRepeatsASecretFromAnyValue(t *testing.T) {
	for _, leaked := range []string{
		"http://alice:SECRET@h.test/x?token=SECRET",
		// A double quote in a query value (url.Parse accepts it, net/http
		// sends it as written) or a password (as url.Parse's error
		// prints it): read as text, the quote ended the URL.
		`http://h.test/x?token="SECRET"`,
		`http://alice:SECRET"x@h.test/x`,
	} {
		reportsKeepNoSecret(t, leaked)
	}
}

func reportsKeepNoSecret(t *testing.T, leaked string) {
	t.Helper()
	for _, which := range []string{"method", "errclass", "decision", "reason", "server", "server userinfo", "outcome", "name", "peer", "server service"} {
		v := func(k, def string) string {
			switch {
			case k == which:
				return leaked
			case k == "server" && which == "server userinfo":
				return "alice:SECRET@h.test"
			}
			return def
		}
		at := span("t1", "a1", "op", 0, 80,
			str(string(attrs.OperationIDKey), "op-1"), str(string(attrs.RequestIDKey), "op-1/attempt-1"), num(string(attrs.AttemptKey), 1),
			str(string(attrs.HTTPRequestMethodKey), v("method", "GET")), str(string(attrs.ErrorClassKey), v("errclass", "timeout")),
			num(string(attrs.ElapsedMsKey), 80), num(string(attrs.RemainingMsKey), 400),
			str(string(attrs.DecisionKey), v("decision", "stop")), str(string(attrs.ReasonKey), v("reason", "max_attempts")))
		at.Name = v("name", "GET")
		op := span("t1", "op", "", 0, 81,
			str(string(attrs.OperationIDKey), "op-1"), str(string(attrs.OutcomeKey), v("outcome", "max_attempts")),
			str(string(attrs.HTTPRequestMethodKey), v("method", "GET")), str(string(attrs.ServerAddressKey), v("server", "h.test")),
			num(string(attrs.ServerPortKey), 8080), num(string(attrs.AttemptsKey), 1),
			str(string(attrs.URLFullKey), "http://h.test:8080/x"), num(string(attrs.DeadlineMsKey), 400))
		op.Name = v("name", "retry GET")
		if which == "peer" {
			op.Attributes = append(op.Attributes, str("peer.service", leaked))
		}
		spans := []model.Span{at, op}
		if which == "server service" {
			at.Service, op.Service = "checkout", "checkout"
			server := span("t1", "s1", "a1", 1, 79)
			server.Kind, server.Service = model.KindServer, leaked
			spans = []model.Span{at, op, server}
		}
		r := inspect.Analyze(spans)
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
		for format, out := range map[string]string{"text": text.String(), "HTML": page.String(), "JSON": js.String()} {
			if i := strings.Index(out, "SECRET"); i >= 0 {
				t.Errorf("%s in %s: the %s report repeats a secret: %q", leaked, which, format, out[max(0, i-100):min(len(out), i+40)])
			}
		}
	}
}
