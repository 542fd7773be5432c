// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// peerServiceKey is the attribute service.peer.name replaced (semantic
// conventions v1.43 no longer define it; older instrumentations write it).
const peerServiceKey = attribute.Key("peer.service")

// namedDependencies calls five services, each named another way: payments
// (service.peer.name, on an attempt of one operation and on the operation
// span of another, a POST and a GET), inventory (the deprecated
// peer.service), orders (the service.name of the server span under an
// attempt), and three that only their address names: 127.0.0.4:9000,
// 127.0.0.1:8080, whose server span has the caller's own service.name,
// and api.example.com, whose port is the default of its scheme.
func namedDependencies() []tracefixture.Span {
	at := func(address string, port int64) []attribute.KeyValue {
		return []attribute.KeyValue{attrs.ServerAddressKey.String(address), attrs.ServerPortKey.Int64(port)}
	}
	ok := func(id, method string, n, start int64, extra ...attribute.KeyValue) tracefixture.Span {
		return try{opID: id, n: n, method: method, status: 200, start: start, elapsed: 10, remaining: 1000,
			decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, extra: extra}.span()
	}
	return []tracefixture.Span{
		op{id: "op-charge", method: "POST", url: "http://10.0.0.7:8443/charges", outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000,
			start: 0, end: 11, extra: at("10.0.0.7", 8443),
			children: children(ok("op-charge", "POST", 1, 0, semconv.ServicePeerNameKey.String("payments")))}.span(),
		op{id: "op-receipt", method: "GET", url: "http://10.0.0.7:8443/charges/1", outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000,
			start: 100, end: 111, extra: append(at("10.0.0.7", 8443), semconv.ServicePeerNameKey.String("payments")),
			children: children(ok("op-receipt", "GET", 1, 100))}.span(),
		op{id: "op-stock", method: "GET", url: "http://10.0.0.8/stock", outcome: attrs.OutcomeReturn, attempts: 2, budget: 1000,
			start: 200, end: 331, extra: at("10.0.0.8", 80),
			children: children(
				try{opID: "op-stock", n: 1, method: "GET", status: 503, start: 200, elapsed: 60, remaining: 1000, decision: attrs.DecisionRetry,
					reason: attrs.ReasonRetryableStatus, backoff: 60, extra: []attribute.KeyValue{peerServiceKey.String("inventory")}}.span(),
				ok("op-stock", "GET", 2, 320, peerServiceKey.String("inventory")))}.span(),
		op{id: "op-order", method: "GET", url: endpoint("/orders/7"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000,
			start: 400, end: 411, extra: at("127.0.0.1", 8080),
			children: children(try{opID: "op-order", n: 1, method: "GET", url: endpoint("/orders/7"), status: 200, start: 400, elapsed: 10,
				remaining: 1000, decision: attrs.DecisionReturn, reason: attrs.ReasonResponse, serverService: "orders"}.span())}.span(),
		op{id: "op-user", method: "GET", url: "http://127.0.0.4:9000/users/1", outcome: attrs.OutcomeMaxAttempts, attempts: 1, budget: 1000,
			start: 500, end: 561, extra: at("127.0.0.4", 9000),
			children: children(try{opID: "op-user", n: 1, method: "GET", status: 503, start: 500, elapsed: 60, remaining: 1000,
				decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}.span())}.span(),
		op{id: "op-self", method: "GET", url: endpoint("/self"), outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000,
			start: 700, end: 711, extra: at("127.0.0.1", 8080),
			children: children(try{opID: "op-self", n: 1, method: "GET", url: endpoint("/self"), status: 200, start: 700, elapsed: 10,
				remaining: 1000, decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}.span())}.span(),
		op{id: "op-api", method: "GET", url: "https://api.example.com/v1/things", outcome: attrs.OutcomeReturn, attempts: 1, budget: 1000,
			start: 600, end: 611, extra: at("api.example.com", 443),
			children: children(ok("op-api", "GET", 1, 600))}.span(),
	}
}

// TestDependenciesAreNamedByTheServiceTheyCall: the text, JSON and HTML
// reports name each dependency by the service it calls:
// service.peer.name, else the deprecated peer.service, else the
// service.name of the server span under an attempt, else server.address
// and the port (left out when it is the scheme's default, as a URL's
// host does, which is the retry budget's key). The method is no part of
// it: one dependency takes payments' POST and GET. The three reports
// give each dependency one headline, word for word.
func TestDependenciesAreNamedByTheServiceTheyCall(t *testing.T) {
	spans := stdoutFile(t, namedDependencies()...)
	_, text, _ := run3([]string{spans})
	_, doc, _ := run3([]string{spans, "-json"})
	_, page, _ := run3([]string{spans, "-html", "-"})

	type dep struct{ Name, From string }
	want := []dep{
		{"127.0.0.4:9000", "server.address"}, // the one that did not return, first
		{"inventory", "peer.service"},        // then by retries
		{"payments", "service.peer.name"},    // then by attempts
		{"orders", "service.name"},           // then as they first appear
		{"api.example.com", "server.address"},
		{"127.0.0.1:8080", "server.address"}, // its server span is the caller's own service's
	}
	var r struct {
		Dependencies []struct {
			Name, From, Headline string
			Operations           int
		}
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	var got []dep
	var headlines []string
	for _, d := range r.Dependencies {
		got = append(got, dep{d.Name, d.From})
		headlines = append(headlines, d.Headline)
		if !strings.HasPrefix(d.Headline, d.Name+": ") {
			t.Errorf("JSON headline %q does not start with its name %q", d.Headline, d.Name)
		}
		if d.Name == "payments" && d.Operations != 2 {
			t.Errorf("payments has %d operations, want its POST and its GET", d.Operations)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("JSON dependencies %v, want %v", got, want)
	}

	// The text report lists the same headlines, under "dependencies".
	_, section, found := strings.Cut(text, "\ndependencies: ")
	if !found {
		t.Fatalf("the text report has no dependencies section:\n%s", text)
	}
	var inText []string
	for line := range strings.Lines(section) {
		if l, ok := strings.CutPrefix(line, "  "); ok {
			inText = append(inText, strings.TrimSuffix(l, "\n"))
		} else if len(inText) > 0 || strings.TrimSpace(line) == "" {
			break
		}
	}
	if !slices.Equal(inText, headlines) {
		t.Errorf("the text report's headlines\n%q\nwant the JSON's\n%q", inText, headlines)
	}

	var inPage []string
	for _, m := range regexp.MustCompile(`data-role="headline"><span[^>]*></span>(.*?)</li>`).FindAllStringSubmatch(page, -1) {
		inPage = append(inPage, html.UnescapeString(m[1]))
	}
	if !slices.Equal(inPage, headlines) {
		t.Errorf("the HTML report's headlines\n%q\nwant the JSON's\n%q", inPage, headlines)
	}
}
