// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// opTree is what the client observed of one operation, for checkSpanTree.
type opTree struct {
	id, method string
	// statuses holds each attempt's response status, 0 when none arrived.
	statuses   []int
	stateCheck bool
}

// checkSpanTree holds EVERY expectation of the e2e tests about the shape of
// an operation's span tree: span names, kinds, parent/child links and span
// counts per operation. Everything else (attributes, metrics, exemplars,
// sampling, OTEL_* handling) finds spans by their attributes (see
// indexOperations) and does not depend on the shape; when the shape
// changes, this function is the one to change.
//
// The shape is the target of SPAN-SHAPE.md:
//
//	retry GET                 INTERNAL  the operation span (name: "retry " + method)
//	├── GET                   CLIENT    one attempt span per attempt: otelhttp's client span,
//	│   └── GET /path         SERVER    with the retry.* attempt attributes; the server's span
//	├── GET                   CLIENT    (when a response came) is its only child
//	└── state_check           INTERNAL  at most one, when the operation checked state
//	    └── ...                         (the state check's own calls)
//
// so a single-attempt operation records two client-side spans, and an
// operation of three attempts four.
func checkSpanTree(tr *jaegerTrace, opSpan *jaegerSpan, want opTree, fail func(string, ...any)) {
	id := want.id
	children := map[string][]*jaegerSpan{}
	for j := range tr.Spans {
		s := &tr.Spans[j]
		children[s.parent()] = append(children[s.parent()], s)
	}

	if k := opSpan.kind(); k != "internal" {
		fail("%s: operation %v has kind %s, want internal", id, opSpan, k)
	}
	if name := "retry " + want.method; opSpan.OperationName != name {
		fail("%s: operation span named %q, want %q", id, opSpan.OperationName, name)
	}

	// The operation span's children: the attempt spans and the state_check span.
	var attempts, checks []*jaegerSpan
	for _, c := range children[opSpan.SpanID] {
		switch {
		case c.isAttempt():
			attempts = append(attempts, c)
		case c.OperationName == attrs.StateCheckSpanName:
			checks = append(checks, c)
		default:
			fail("%s: unexpected child %v of the operation span", id, c)
		}
	}
	if want.stateCheck != (len(checks) == 1) || len(checks) > 1 {
		fail("%s: %d state_check children of the operation span, want %d", id, len(checks), map[bool]int{true: 1}[want.stateCheck])
	}
	for _, c := range checks {
		if k := c.kind(); k != "internal" {
			fail("%s: %v has kind %s, want internal", id, c, k)
		}
	}
	// No attempt span of this operation anywhere else in the trace.
	for j := range tr.Spans {
		s := &tr.Spans[j]
		if s.isAttempt() && s.str(attrs.OperationIDKey) == id && s.parent() != opSpan.SpanID {
			fail("%s: attempt %v is not a child of the operation span", id, s)
		}
	}
	if len(attempts) != len(want.statuses) {
		fail("%s: %d attempt spans under the operation span, want %d", id, len(attempts), len(want.statuses))
		return
	}
	byNumber := map[int64]*jaegerSpan{}
	for _, a := range attempts {
		n, _ := a.int(attrs.AttemptKey)
		byNumber[n] = a
	}
	for i, status := range want.statuses {
		where := fmt.Sprintf("%s attempt %d", id, i+1)
		a := byNumber[int64(i+1)]
		if a == nil {
			fail("%s: no attempt span with %s=%d", where, attrs.AttemptKey, i+1)
			continue
		}
		// The attempt span is otelhttp's CLIENT span, named by semconv.
		if k := a.kind(); k != "client" {
			fail("%s: %v has kind %s, want client", where, a, k)
		}
		if a.OperationName != want.method {
			fail("%s: attempt span named %q, want %q", where, a.OperationName, want.method)
		}
		// Under it, only the server's span: one when a response came.
		var servers []*jaegerSpan
		for _, c := range children[a.SpanID] {
			if c.kind() == "server" {
				servers = append(servers, c)
			} else {
				fail("%s: unexpected child %v of the attempt span", where, c)
			}
		}
		switch {
		case status != 0 && len(servers) != 1:
			fail("%s: %d server spans under the attempt span, want 1", where, len(servers))
		case status == 0 && len(servers) > 1:
			fail("%s: %d server spans under the attempt span, want at most 1", where, len(servers))
		}
		for _, s := range servers {
			if got, _ := s.int(attrs.HTTPResponseStatusCodeKey); status != 0 && got != int64(status) {
				fail("%s: server span status %q, want %d", where, s.str(attrs.HTTPResponseStatusCodeKey), status)
			}
		}
	}
}

// TestCheckSpanTree checks checkSpanTree itself on hand-made traces: the
// target shape passes, and the pre-v0.2 shape (an INTERNAL attempt span
// with otelhttp's CLIENT span under it) and broken trees fail.
func TestCheckSpanTree(t *testing.T) {
	want := opTree{id: "op-1", method: "GET", statuses: []int{503, 200}}
	target := func() *jaegerTrace {
		return fakeTrace(
			fakeSpan{id: "op", name: "retry GET", tags: map[string]any{kOpID: "op-1", kOutcome: "return"}},
			fakeSpan{id: "a1", parent: "op", name: "GET", kind: "client", tags: map[string]any{kOpID: "op-1", kAttempt: 1}},
			fakeSpan{id: "s1", parent: "a1", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 503}},
			fakeSpan{id: "a2", parent: "op", name: "GET", kind: "client", tags: map[string]any{kOpID: "op-1", kAttempt: 2}},
			fakeSpan{id: "s2", parent: "a2", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 200}},
		)
	}
	check := func(tr *jaegerTrace, w opTree) []string {
		var problems []string
		fail := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
		for i := range tr.Spans {
			if tr.Spans[i].SpanID == "op" {
				checkSpanTree(tr, &tr.Spans[i], w, fail)
			}
		}
		return problems
	}
	if p := check(target(), want); len(p) != 0 {
		t.Fatalf("target shape: %v", p)
	}
	withCheck := target()
	withCheck.Spans = append(withCheck.Spans, jaegerSpanOf(fakeSpan{id: "sc", parent: "op", name: "state_check",
		tags: map[string]any{kOpID: "op-1"}}))
	indexTags(withCheck)
	if p := check(withCheck, opTree{id: "op-1", method: "GET", statuses: []int{503, 200}, stateCheck: true}); len(p) != 0 {
		t.Errorf("target shape with a state check: %v", p)
	}

	for name, c := range map[string]struct {
		tr   *jaegerTrace
		want string
	}{
		"pre-v0.2 shape": {fakeTrace(
			fakeSpan{id: "op", name: "retry GET", tags: map[string]any{kOpID: "op-1", kOutcome: "return"}},
			fakeSpan{id: "a1", parent: "op", name: "attempt GET", tags: map[string]any{kOpID: "op-1", kAttempt: 1}},
			fakeSpan{id: "c1", parent: "a1", name: "HTTP GET", kind: "client"},
			fakeSpan{id: "s1", parent: "c1", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 503}},
			fakeSpan{id: "a2", parent: "op", name: "attempt GET", tags: map[string]any{kOpID: "op-1", kAttempt: 2}},
			fakeSpan{id: "c2", parent: "a2", name: "HTTP GET", kind: "client"},
			fakeSpan{id: "s2", parent: "c2", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 200}},
		), "want client"},
		"attempt missing": {fakeTrace(
			fakeSpan{id: "op", name: "retry GET", tags: map[string]any{kOpID: "op-1", kOutcome: "return"}},
			fakeSpan{id: "a1", parent: "op", name: "GET", kind: "client", tags: map[string]any{kOpID: "op-1", kAttempt: 1}},
			fakeSpan{id: "s1", parent: "a1", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 503}},
		), "1 attempt spans under the operation span, want 2"},
		"extra child": {func() *jaegerTrace {
			tr := target()
			tr.Spans = append(tr.Spans, jaegerSpanOf(fakeSpan{id: "x", parent: "op", name: "HTTP GET", kind: "client"}))
			indexTags(tr)
			return tr
		}(), "unexpected child"},
		"server span missing": {fakeTrace(
			fakeSpan{id: "op", name: "retry GET", tags: map[string]any{kOpID: "op-1", kOutcome: "return"}},
			fakeSpan{id: "a1", parent: "op", name: "GET", kind: "client", tags: map[string]any{kOpID: "op-1", kAttempt: 1}},
			fakeSpan{id: "a2", parent: "op", name: "GET", kind: "client", tags: map[string]any{kOpID: "op-1", kAttempt: 2}},
			fakeSpan{id: "s2", parent: "a2", name: "GET /x", kind: "server", tags: map[string]any{kStatus: 200}},
		), "0 server spans"},
		"operation span renamed": {func() *jaegerTrace {
			tr := target()
			tr.Spans[0].OperationName = "GET"
			return tr
		}(), `named "GET", want "retry GET"`},
		"state check missing": {target(), "state_check children"},
	} {
		t.Run(name, func(t *testing.T) {
			w := want
			if name == "state check missing" {
				w.stateCheck = true
			}
			p := check(c.tr, w)
			if !strings.Contains(strings.Join(p, "\n"), c.want) {
				t.Errorf("want a problem containing %q, got %v", c.want, p)
			}
		})
	}
}

// Attribute keys of the hand-made spans, from the vocabulary.
var (
	kOpID    = string(attrs.OperationIDKey)
	kOutcome = string(attrs.OutcomeKey)
	kAttempt = string(attrs.AttemptKey)
	kStatus  = string(attrs.HTTPResponseStatusCodeKey)
)

type fakeSpan struct {
	id, parent, name, kind string
	tags                   map[string]any
}

func jaegerSpanOf(f fakeSpan) jaegerSpan {
	s := jaegerSpan{TraceID: "t1", SpanID: f.id, OperationName: f.name}
	if f.parent != "" {
		s.References = []jaegerRef{{RefType: "CHILD_OF", TraceID: "t1", SpanID: f.parent}}
	}
	if f.kind != "" {
		s.Tags = append(s.Tags, jaegerTag{Key: "span.kind", Value: f.kind})
	}
	for k, v := range f.tags {
		if n, ok := v.(int); ok {
			v = json.Number(fmt.Sprint(n))
		}
		s.Tags = append(s.Tags, jaegerTag{Key: k, Value: v})
	}
	return s
}

func fakeTrace(spans ...fakeSpan) *jaegerTrace {
	tr := &jaegerTrace{TraceID: "t1"}
	for _, f := range spans {
		tr.Spans = append(tr.Spans, jaegerSpanOf(f))
	}
	indexTags(tr)
	return tr
}
