// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package spancheck

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
)

// AssertOperation checks the one operation span's outcome and attempts,
// and that there are that many attempt spans.
func AssertOperation(t testing.TB, rec *tracetest.SpanRecorder, outcome attrs.Outcome, attempts int) {
	t.Helper()
	spans := rec.Ended()
	ops := spantest.Operations(spans)
	if len(ops) != 1 {
		t.Fatalf("got %d operation spans; want 1", len(ops))
	}
	AssertAttr(t, ops[0], attrs.OutcomeKey, string(outcome))
	if n, _ := spantest.Attr(ops[0], attrs.AttemptsKey); n.AsInt64() != int64(attempts) {
		t.Errorf("operation %s = %d; want %d", attrs.AttemptsKey, n.AsInt64(), attempts)
	}
	if a := spantest.Attempts(spans); len(a) != attempts {
		t.Fatalf("got %d attempt spans; want %d", len(a), attempts)
	}
}

// AssertRefused checks an attempt a classifier proved unprocessed, with
// the protocol's evidence (protocol, code, name).
func AssertRefused(t testing.TB, a sdktrace.ReadOnlySpan, d attrs.Decision, protocol string, code int64, name string) {
	t.Helper()
	AssertAttr(t, a, attrs.ErrorClassKey, string(attrs.ErrorClassRefusedStream))
	AssertAttr(t, a, attrs.DecisionKey, string(d))
	AssertAttr(t, a, attrs.EvidenceProtocolKey, protocol)
	AssertAttr(t, a, attrs.EvidenceNameKey, name)
	if v, ok := spantest.Attr(a, attrs.EvidenceCodeKey); !ok || v.Type() != attribute.INT64 || v.AsInt64() != code {
		t.Errorf("attempt %s = %s; want the int %d", attrs.EvidenceCodeKey, v.Emit(), code)
	}
	if r, _ := spantest.Attr(a, attrs.ReasonKey); r.AsString() != string(attrs.ReasonClassifier) && r.AsString() != string(attrs.ReasonNotProcessed) {
		t.Errorf("attempt %s = %q; want %s or %s", attrs.ReasonKey, r.AsString(), attrs.ReasonClassifier, attrs.ReasonNotProcessed)
	}
}

// AssertAnswered checks an attempt that got a 200.
func AssertAnswered(t testing.TB, a sdktrace.ReadOnlySpan) {
	t.Helper()
	AssertAttr(t, a, attrs.DecisionKey, string(attrs.DecisionReturn))
	if s, _ := spantest.Attr(a, attrs.HTTPResponseStatusCodeKey); s.AsInt64() != http.StatusOK {
		t.Errorf("attempt %s = %d; want 200", attrs.HTTPResponseStatusCodeKey, s.AsInt64())
	}
	if c, ok := spantest.Attr(a, attrs.ErrorClassKey); ok {
		t.Errorf("answered attempt has %s = %q", attrs.ErrorClassKey, c.AsString())
	}
	AssertNoEvidence(t, a)
}

// AssertNoEvidence checks that an attempt records no protocol evidence.
func AssertNoEvidence(t testing.TB, a sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, k := range []attribute.Key{attrs.EvidenceProtocolKey, attrs.EvidenceCodeKey, attrs.EvidenceNameKey} {
		if v, ok := spantest.Attr(a, k); ok {
			t.Errorf("attempt has %s = %s; want none", k, v.Emit())
		}
	}
}

// AssertAttr checks a string attribute of s.
func AssertAttr(t testing.TB, s sdktrace.ReadOnlySpan, k attribute.Key, want string) {
	t.Helper()
	if v, _ := spantest.Attr(s, k); v.AsString() != want {
		t.Errorf("%s span: %s = %q; want %q", s.Name(), k, v.AsString(), want)
	}
}
