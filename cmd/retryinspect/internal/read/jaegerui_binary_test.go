// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"strings"
	"testing"
)

// otlpBytesLine is one OTLP span whose attribute "blob" is bytes (base64
// AAE= in OTLP JSON).
const otlpBytesLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},` +
	`"scopeSpans":[{"scope":{"name":"s"},"spans":[{"traceId":"4c895c31b8f60720fbf0d5070813d45b","spanId":"153bebe0c7d842d5",` +
	`"name":"op","kind":1,"startTimeUnixNano":"1796620787957806000","endTimeUnixNano":"1796620787957841000",` +
	`"attributes":[{"key":"blob","value":{"bytesValue":"AAE="}}]}]}]}]}`

// TestJaegerUIBinaryTagReadsAsOTLPs: the same span, written by the
// Collector's Jaeger translator (an OTLP bytes attribute becomes a binary
// tag, which Jaeger's JSON writes as a base64 string), reads as the value
// the OTLP reader gives; the docs promise the report is the one the same
// spans give from /api/v3 or the Collector's file, and jaegerValue's
// godoc says binary is "base64, kept as text" (a reviewer's find: the
// JSON string's quotes were kept).
func TestJaegerUIBinaryTagReadsAsOTLPs(t *testing.T) {
	fromOTLP, err := OTLP(strings.NewReader(otlpBytesLine), "otlp", 0)
	if err != nil || len(fromOTLP) != 1 {
		t.Fatalf("otlp: %d spans, %v", len(fromOTLP), err)
	}
	fromUI, err := JaegerSaved(strings.NewReader(uiAnswer(uiSpan("153bebe0c7d842d5", "",
		`{"key":"blob","type":"binary","value":"AAE="}`, ""))), "ui", 0)
	if err != nil || len(fromUI) != 1 {
		t.Fatalf("ui: %d spans, %v", len(fromUI), err)
	}
	want, _ := fromOTLP[0].Attr("blob")
	got, _ := fromUI[0].Attr("blob")
	if got != want {
		t.Errorf("binary tag reads as %+v (text %q); the OTLP reader gives %+v (text %q)", got, got.Text(), want, want.Text())
	}
}
