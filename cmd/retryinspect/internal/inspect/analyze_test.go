// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

func kv(key string, v model.Value) model.Attribute { return model.Attribute{Key: key, Value: v} }

func codesOf(r *Report) []Code {
	var codes []Code
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	return codes
}

func noteCodesOf(r *Report) []Code {
	var codes []Code
	for _, n := range r.Notes {
		codes = append(codes, n.Code)
	}
	return codes
}

// TestAnalyzeEdges covers inputs the golden sets do not build with the SDK.
func TestAnalyzeEdges(t *testing.T) {
	base := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	// attempt builds a contract-abiding attempt span; extra replaces
	// attributes of the same key.
	attempt := func(id, parent string, extra ...model.Attribute) model.Span {
		as := []model.Attribute{
			kv(keyOperationID, model.String("op")), kv(keyRequestID, model.String("op/"+id)),
			kv(keyAttempt, model.Int(1)), kv(keyMethod, model.String("get")),
			kv(keyStatusCode, model.Int(200)), kv(keyElapsedMs, model.Int(1)),
			kv(keyRemainingMs, model.Int(10)), kv(keyDecision, model.String(string(attrs.DecisionReturn))),
		}
		for _, e := range extra {
			as = slices.DeleteFunc(as, func(a model.Attribute) bool { return a.Key == e.Key })
		}
		return model.Span{TraceID: "t1", SpanID: id, ParentID: parent, Name: "attempt", Start: base, End: base,
			Attributes: append(as, extra...)}
	}
	for _, tc := range []struct {
		name  string
		spans []model.Span
		want  []Code
		notes []Code
		check func(*testing.T, *Report)
	}{
		{name: "empty", check: func(t *testing.T, r *Report) {
			if r.Operations == nil || r.Findings == nil || r.Notes == nil || r.Summary.Decisions == nil {
				t.Error("nil slices would print as null")
			}
		}},
		{name: "parent cycle", spans: []model.Span{
			{TraceID: "t1", SpanID: "a", ParentID: "b", Name: "x"},
			{TraceID: "t1", SpanID: "b", ParentID: "a", Name: "y"},
			attempt("c", "a"),
		}, notes: []Code{CodeNoOperationSpan}},
		{name: "self parent", spans: []model.Span{attempt("c", "c")}, notes: []Code{CodeNoOperationSpan}},
		{name: "parent lost", spans: []model.Span{attempt("c", "gone")}, want: []Code{CodeMissingOperationSpan}},
		{name: "integral float attribute", spans: []model.Span{
			attempt("c", "", kv(keyRemainingMs, model.Float(10))),
		}, want: []Code{CodeInvalidAttribute}, notes: []Code{CodeNoOperationSpan}, check: func(t *testing.T, r *Report) {
			if got := r.Operations[0].Attempts[0].RemainingMs; got == nil || *got != 10 {
				t.Errorf("remaining %v, want 10 read from the float", got)
			}
			if got := r.Operations[0].Method; got != "GET" {
				t.Errorf("method %q, want GET", got)
			}
		}},
		{name: "string attempt number", spans: []model.Span{
			attempt("c", "", kv(keyAttempt, model.String("1"))),
		}, want: []Code{CodeInvalidAttribute}, notes: []Code{CodeNoOperationSpan}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(tc.spans)
			got := codesOf(r)
			if !slices.Equal(got, tc.want) {
				t.Errorf("codes %v, want %v", got, tc.want)
			}
			if got := noteCodesOf(r); !slices.Equal(got, tc.notes) {
				t.Errorf("notes %v, want %v", got, tc.notes)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestCodesHaveAdvice(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range append(Codes(), NoteCodes()...) {
		if c.Check() == "" || seen[c] {
			t.Errorf("code %q: no advice or listed twice", c)
		}
		seen[c] = true
	}
}

// Ids are compared as recorded and sanitized only where shown: two
// operations whose ids hold a userinfo's shape ("signup:alice@shop.test",
// "signup:bob@shop.test") are two operations, with no finding, though
// both ids are shown as "REDACTED:REDACTED@shop.test" (an id of that shape
// may be a user and a password). Sanitized as they were read, they
// collided: an operation id reused, a duplicate request id.
func TestIDsAreComparedAsRecordedAndShownSanitized(t *testing.T) {
	r := Analyze([]model.Span{
		operationSpan("t1", 1, 0, "signup:alice@shop.test", 1, 1000),
		minimalAttempt("t1", 2, 1, "signup:alice@shop.test", 1, 0),
		operationSpan("t2", 3, 0, "signup:bob@shop.test", 1, 1000),
		minimalAttempt("t2", 4, 3, "signup:bob@shop.test", 1, 0),
	})
	if got := codesOf(r); len(got) != 0 {
		t.Errorf("findings %v on two distinct operations, want none", got)
	}
	if len(r.Operations) != 2 {
		t.Fatalf("%d operations, want 2", len(r.Operations))
	}
	for _, op := range r.Operations {
		if op.ID != "REDACTED:REDACTED@shop.test" || len(op.Attempts) != 1 ||
			op.Attempts[0].OperationID != op.ID || strings.Contains(op.Attempts[0].RequestID, "alice") || strings.Contains(op.Attempts[0].RequestID, "bob") {
			t.Errorf("operation %q, attempts %+v: want its ids shown sanitized", op.ID, op.Attempts)
		}
	}
}

// A finding's text sanitizes each id where it inserts it, not the whole
// text after: sanitized whole, an id of a userinfo's shape (the request id
// otelretry makes from such an operation id) took the '(' before it into
// its word, and a '"' in an id made the message's own words, up to the
// next quote, one quoted URL, and lost them.
func TestAFindingKeepsTheTextAroundAnID(t *testing.T) {
	for opID, want := range map[string][]string{
		"signup:alice@shop.test": {"attempt 2 (REDACTED:REDACTED@shop.test/attempt-2) carries operation id"},
		`op"1?token=SECRET`:      {") carries operation id ", " under the operation span of "},
	} {
		at := minimalAttempt("t1", 3, 1, opID, 2, 2)
		for i, a := range at.Attributes {
			if a.Key == keyOperationID {
				at.Attributes[i].Value = model.String("other-operation") // an operation-id-split finding
			}
		}
		r := Analyze([]model.Span{
			operationSpan("t1", 1, 0, opID, 2, 1000),
			minimalAttempt("t1", 2, 1, opID, 1, 0),
			at,
		})
		var seen string
		for _, f := range r.Findings {
			if f.Code == CodeOperationIDSplit {
				seen = f.Seen
			}
		}
		if seen == "" {
			t.Fatalf("%q: no operation-id-split finding in %v", opID, codesOf(r))
		}
		for _, w := range want {
			if !strings.Contains(seen, w) {
				t.Errorf("%q: finding reads %q, want it to hold %q", opID, seen, w)
			}
		}
	}
}
