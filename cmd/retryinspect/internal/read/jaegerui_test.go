// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// uiSpan is one span of /api/traces JSON with the given tags, logs and
// references (JSON arrays' contents).
func uiSpan(spanID, refs, tags, logs string) string {
	return `{"traceID":"4c895c31b8f60720fbf0d5070813d45b","spanID":"` + spanID + `","operationName":"op","references":[` + refs +
		`],"startTime":1796620787957806,"duration":35,"tags":[` + tags + `],"logs":[` + logs + `],"processID":"p1","warnings":null}`
}

func uiAnswer(spans ...string) string {
	return `{"data":[{"traceID":"4c895c31b8f60720fbf0d5070813d45b","spans":[` + strings.Join(spans, ",") +
		`],"processes":{"p1":{"serviceName":"checkout","tags":[]}},"warnings":null}],"total":0,"limit":0,"offset":0,"errors":null}`
}

// TestJaegerUIUndoesTheTranslator: the tags the Collector's Jaeger
// translator adds for OTLP's own fields (kind, status, scope, trace state)
// are no attributes; an error tag is dropped only beside an ERROR status,
// where the translator adds it; logs are events named by their "event"
// field; the parent is the CHILD_OF reference, not a FOLLOWS_FROM link.
func TestJaegerUIUndoesTheTranslator(t *testing.T) {
	translator := `{"key":"span.kind","type":"string","value":"client"},{"key":"otel.status_code","type":"string","value":"ERROR"},` +
		`{"key":"otel.status_description","type":"string","value":"x"},{"key":"otel.scope.name","type":"string","value":"s"},` +
		`{"key":"otel.scope.version","type":"string","value":"1"},{"key":"w3c.tracestate","type":"string","value":"a=b"},` +
		`{"key":"error","type":"bool","value":true}`
	own := `{"key":"retry.attempt","type":"int64","value":2},{"key":"retry.decision","type":"string","value":"retry"},` +
		`{"key":"ratio","type":"float64","value":0.5},{"key":"ok","type":"bool","value":false},{"key":"blob","type":"binary","value":"AAE="}`
	logs := `{"timestamp":1796620787957810,"fields":[{"key":"event","type":"string","value":"hedge_sent"},{"key":"retry.hedge.of","type":"int64","value":1}]}`
	refs := `{"refType":"FOLLOWS_FROM","traceID":"4c895c31b8f60720fbf0d5070813d45b","spanID":"00000000000000aa"},` +
		`{"refType":"CHILD_OF","traceID":"4c895c31b8f60720fbf0d5070813d45b","spanID":"9c0647a0ec2f44d4"}`
	userError := `{"key":"error","type":"bool","value":true}`
	spans, err := JaegerSaved(strings.NewReader(uiAnswer(uiSpan("153bebe0c7d842d5", refs, translator+","+own, logs),
		uiSpan("153bebe0c7d842d6", "", userError, ""))), "in", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	s := spans[0]
	start := time.UnixMicro(1796620787957806).UTC()
	if s.Kind != model.KindClient || s.ParentID != "9c0647a0ec2f44d4" || s.Service != "checkout" || s.Name != "op" ||
		!s.Start.Equal(start) || !s.End.Equal(start.Add(35*time.Microsecond)) {
		t.Errorf("span %+v", s)
	}
	var keys []string
	for _, a := range s.Attributes {
		keys = append(keys, a.Key)
	}
	if got := strings.Join(keys, " "); got != "retry.attempt retry.decision ratio ok blob" {
		t.Errorf("attributes %q, want the span's own", got)
	}
	if v, _ := s.Attr("retry.attempt"); v != model.Int(2) {
		t.Errorf("retry.attempt %+v", v)
	}
	if v, _ := s.Attr("ratio"); v != model.Float(0.5) {
		t.Errorf("ratio %+v", v)
	}
	if len(s.Events) != 1 || s.Events[0].Name != "hedge_sent" || len(s.Events[0].Attributes) != 1 ||
		!s.Events[0].Time.Equal(start.Add(4*time.Microsecond)) {
		t.Errorf("events %+v", s.Events)
	}
	if v, ok := spans[1].Attr("error"); !ok || v != model.Bool(true) || spans[1].Kind != model.KindUnspecified || spans[1].ParentID != "" {
		t.Errorf("a span's own error tag, without an ERROR status: %+v", spans[1])
	}
}

// TestJaegerUIAnswers: a not-found answer is no spans; an error answer and
// malformed spans are errors that name where, and say what.
func TestJaegerUIAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, input, err string
		spans            int
	}{
		{"not found", `{"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code":404,"msg":"trace not found"}]}`, "", 0},
		{"no data", `{"data":[],"errors":null}`, "", 0},
		{"two answers", uiAnswer(uiSpan("01", "", "", "")) + "\n" + uiAnswer(uiSpan("02", "", "", "")), "", 2},
		{"an error", `{"data":null,"errors":[{"code":500,"msg":"storage\u0007 down"}]}`, `jaeger reports: "storage\a down" (HTTP 500)`, 0},
		// A CHILD_OF of another trace is a link (an OpenTracing child_of
		// link, as the Collector's translator writes one): the span reads
		// as a root (a reviewer's find: the whole file was refused).
		{"a link of another trace", uiAnswer(uiSpan("01", `{"refType":"CHILD_OF","traceID":"ff","spanID":"02"}`, "", "")), "", 1},
		{"a bad parent span id", uiAnswer(uiSpan("01", `{"refType":"CHILD_OF","traceID":"4c895c31b8f60720fbf0d5070813d45b","spanID":"zz"}`, "", "")),
			`data[0].spans[0].references[0].spanID: invalid span id "zz"`, 0},
		{"a bad span id", uiAnswer(uiSpan("zz", "", "", "")), `data[0].spans[0].spanID: invalid span id "zz"`, 0},
		{"a negative log time", uiAnswer(uiSpan("01", "", "", `{"timestamp":-1,"fields":[]}`)), "data[0].spans[0].logs[0].timestamp: negative: -1", 0},
		{"a tag of the wrong type", uiAnswer(uiSpan("01", "", `{"key":"retry.attempt","type":"int64","value":"two"}`, "")),
			`data[0].spans[0].tags[0] ("retry.attempt")`, 0},
		{"a duration past the last time", strings.Replace(uiAnswer(uiSpan("01", "", "", "")), `"duration":35`, `"duration":9223372036854775807`, 1),
			"data[0].spans[0].duration: ends past the last time", 0},
		{"neither", `{"traces":[]}`, "not a saved Jaeger answer", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans, err := JaegerSaved(strings.NewReader(tc.input), "in", 0)
			if tc.err == "" {
				if err != nil || len(spans) != tc.spans {
					t.Errorf("%d spans, error %v; want %d", len(spans), err, tc.spans)
				}
				return
			}
			var pe *PositionError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) {
				t.Errorf("error %v, want a *PositionError containing %q", err, tc.err)
			}
		})
	}
}

// A root span whose only reference is a CHILD_OF of another trace (an
// OpenTracing child_of link, as the Collector's translator writes it)
// reads as a root, as OTLP reads the same span (a reviewer's find).
func TestAChildOfLinkToAnotherTraceIsNoParent(t *testing.T) {
	spans, err := JaegerSaved(strings.NewReader(uiAnswer(uiSpan("01",
		`{"refType":"CHILD_OF","traceID":"0af7651916cd43dd8448eb211c80319c","spanID":"00f067aa0ba902b7"}`, "", ""))), "in", 0)
	if err != nil || len(spans) != 1 || spans[0].ParentID != "" {
		t.Errorf("spans %+v, error %v; want one root span", spans, err)
	}
}
