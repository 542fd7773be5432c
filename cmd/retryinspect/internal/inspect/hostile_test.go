// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Inputs an adversary would craft, and inputs too large for quadratic
// work. Each test here failed before the inspector handled its case.

var hostileBase = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

func spanID(i int) string { return fmt.Sprintf("%016x", i) }

// minimalAttempt is an attempt span with the minimal attempt event.
func minimalAttempt(trace string, id, parent int, opID string, n int64, startMs int64) model.Span {
	return model.Span{
		TraceID: trace, SpanID: spanID(id), ParentID: parentID(parent), Name: "GET", Kind: model.KindClient,
		Start: hostileBase.Add(time.Duration(startMs) * time.Millisecond), End: hostileBase.Add(time.Duration(startMs+1) * time.Millisecond),
		Attributes: []model.Attribute{
			kv(keyOperationID, model.String(opID)), kv(keyRequestID, model.String(opID+"/attempt-"+strconv.FormatInt(n, 10))),
			kv(keyAttempt, model.Int(n)), kv(keyMethod, model.String("GET")), kv(keyStatusCode, model.Int(200)),
			kv(keyElapsedMs, model.Int(1)), kv(keyRemainingMs, model.Int(1000)), kv(keyDecision, model.String(string(attrs.DecisionReturn))),
		},
	}
}

func parentID(i int) string {
	if i <= 0 {
		return ""
	}
	return spanID(i)
}

// operationSpan is a complete operation span.
func operationSpan(trace string, id, parent int, opID string, attempts, deadline int64, extra ...model.Attribute) model.Span {
	as := []model.Attribute{
		kv(keyOperationID, model.String(opID)), kv(keyMethod, model.String("GET")), kv(keyURLFull, model.String("http://h.test/x")),
		kv(keyServerAddress, model.String("h.test")), kv(keyAttempts, model.Int(attempts)),
		kv(keyOutcome, model.String(string(attrs.OutcomeReturn))), kv(keyDeadlineMs, model.Int(deadline)),
	}
	for _, e := range extra {
		as = slices.DeleteFunc(as, func(a model.Attribute) bool { return a.Key == e.Key })
	}
	return model.Span{TraceID: trace, SpanID: spanID(id), ParentID: parentID(parent), Name: "retry GET", Kind: model.KindInternal,
		Start: hostileBase, End: hostileBase.Add(time.Second), Attributes: append(as, extra...)}
}

// TestNearestAncestorsIsLinear counts the calls of the match function: a
// memoized walk makes at most one per span and parent link, where the
// former walk made one per span per level above it (n²/2 on a chain).
func TestNearestAncestorsIsLinear(t *testing.T) {
	const n = 10000
	for name, parent := range map[string]func(i int) int{
		"chain":        func(i int) int { return i - 1 },
		"cycle":        func(i int) int { return (i + 1) % n },
		"self":         func(i int) int { return i },
		"two cycles":   func(i int) int { return (i/2)*2 + (i+1)%2 },
		"star":         func(i int) int { return min(i, 1) - 1 },
		"long to loop": func(i int) int { return max(i-1, n-10) },
	} {
		parents := make([]int, n)
		for i := range parents {
			parents[i] = parent(i)
		}
		calls := 0
		got := nearestAncestors(parents, func(int) bool { calls++; return false })
		if calls > 2*n {
			t.Errorf("%s: %d calls of match for %d spans", name, calls, n)
		}
		for i, a := range got {
			if a != -1 {
				t.Fatalf("%s: span %d has ancestor %d with no match", name, i, a)
			}
		}
	}

	// Matches: on a chain where every 10th span matches, the nearest is the
	// 10th above; a span is never its own ancestor, even on a cycle.
	parents := make([]int, 100)
	for i := range parents {
		parents[i] = i - 1
	}
	got := nearestAncestors(parents, func(p int) bool { return p%10 == 0 })
	for i, a := range got {
		want := -1
		if i > 0 {
			want = (i - 1) / 10 * 10
		}
		if a != want {
			t.Errorf("chain: ancestor of %d = %d, want %d", i, a, want)
		}
	}
	cycle := []int{1, 2, 0}
	got = nearestAncestors(cycle, func(p int) bool { return p == 0 })
	if want := []int{-1, 2, 0}; !slices.Equal(got, want) && !slices.Equal(got, []int{-1, 0, 0}) {
		// 2's parent is 0 (a match); 1's parent is 2, whose nearest is 0.
		t.Errorf("cycle: %v", got)
	}
	if got[0] == 0 {
		t.Error("span 0 is its own ancestor")
	}
}

// TestAnalyzeHugeHostileInputs analyzes inputs that took minutes to hours
// with quadratic grouping (a 100k-span parent chain was killed after 7
// minutes, 100k orphan attempts took 46 s): a 200k-span parent chain and
// cycle under one attempt, and 100k attempts (10k under the race
// detector) without operation spans whose ids all have an operation span
// in another trace.
func TestAnalyzeHugeHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	const n = 200_000
	chain := make([]model.Span, 0, n+1)
	cycle := make([]model.Span, 0, n+1)
	for i := 1; i <= n; i++ {
		chain = append(chain, model.Span{TraceID: "t", SpanID: spanID(i), ParentID: parentID(i - 1), Start: hostileBase})
		cycle = append(cycle, model.Span{TraceID: "t", SpanID: spanID(i), ParentID: parentID(i%n + 1), Start: hostileBase})
	}
	chain = append(chain, minimalAttempt("t", n+1, n, "op", 1, 0))
	cycle = append(cycle, minimalAttempt("t", n+1, n, "op", 1, 0))
	for name, spans := range map[string][]model.Span{"chain": chain, "cycle": cycle} {
		r := Analyze(spans)
		if r.Spans.Total != n+1 || len(r.Operations) != 1 || len(r.Findings) != 0 {
			t.Errorf("%s: %d spans, %d operations, findings %v", name, r.Spans.Total, len(r.Operations), codesOf(r))
		}
	}

	// Log records of one operation id: each attempt record is found among
	// the id's operations by time, by a search, not a scan of them all (a
	// scan took 12 s for 40k, and grew with the square).
	loop := 100_000
	if raceEnabled {
		loop = 10_000
	}
	for _, every := range []time.Duration{10 * time.Millisecond, 0} {
		r := Analyze(logRecordsOfOneID(loop, every))
		one := 0
		for _, op := range r.Operations {
			if len(op.Attempts) == 1 {
				one++
			}
		}
		if every > 0 && one != loop {
			t.Errorf("%d of %d operations of one id read from log records got their one attempt", one, loop)
		}
		if len(r.Operations) != loop {
			t.Errorf("every %v: %d operations, want %d", every, len(r.Operations), loop)
		}
	}

	orphans := 100_000
	if raceEnabled {
		orphans = 10_000
	}
	var spans []model.Span
	for i := range orphans {
		op := "op-" + strconv.Itoa(i)
		spans = append(spans,
			operationSpan("a", 2*i+1, 0, op, 1, 1000),
			minimalAttempt("b", 2*i+2, 0, op, 1, 0))
	}
	r := Analyze(spans)
	missing := 0
	for _, f := range r.Findings {
		if f.Code == CodeMissingOperationSpan {
			missing++
		}
	}
	if missing != orphans {
		t.Errorf("%d missing-operation-span findings, want %d", missing, orphans)
	}
}

// TestHugeDeadline: a time limit beyond what a time.Duration holds used to
// wrap negative and flag every attempt as after the deadline.
func TestHugeDeadline(t *testing.T) {
	for _, ms := range []int64{math.MaxInt64, math.MaxInt64 / int64(time.Millisecond), math.MaxInt64/int64(time.Millisecond) + 1} {
		r := Analyze([]model.Span{
			operationSpan("t", 1, 0, "op", 1, ms),
			minimalAttempt("t", 2, 1, "op", 1, 5),
		})
		if len(r.Findings) != 0 {
			t.Errorf("deadline %d ms: findings %v: %s", ms, codesOf(r), r.Findings[0].Seen)
		}
	}
	r := Analyze([]model.Span{operationSpan("t", 1, 0, "op", 1, -1), minimalAttempt("t", 2, 1, "op", 1, 5)})
	if got := codesOf(r); !slices.Equal(got, []Code{CodeInvalidAttribute}) || !strings.Contains(r.Findings[0].Seen, "retry.deadline_ms is -1, want 0 or more") {
		t.Errorf("negative deadline: %v %v", got, r.Findings)
	}
	// The deadline still holds where it can be computed.
	r = Analyze([]model.Span{operationSpan("t", 1, 0, "op", 1, 3), minimalAttempt("t", 2, 1, "op", 1, 5)})
	if got := codesOf(r); !slices.Equal(got, []Code{CodeAttemptAfterDeadline}) {
		t.Errorf("deadline 3ms, attempt at +5ms: %v", got)
	}
}

// TestLegacyBudgetKey reads the time limit under its name before v0.2.0.
func TestLegacyBudgetKey(t *testing.T) {
	op := operationSpan("t", 1, 0, "op", 1, 0)
	op.Attributes = slices.DeleteFunc(op.Attributes, func(a model.Attribute) bool { return a.Key == keyDeadlineMs })
	op.Attributes = append(op.Attributes, kv(keyLegacyBudgetMs, model.Int(3)))
	r := Analyze([]model.Span{op, minimalAttempt("t", 2, 1, "op", 1, 5)})
	if got := r.Operations[0].DeadlineMs; got == nil || *got != 3 {
		t.Fatalf("deadline %v, want 3 from %s", got, keyLegacyBudgetMs)
	}
	if got := codesOf(r); !slices.Equal(got, []Code{CodeAttemptAfterDeadline}) || len(r.Notes) != 0 {
		t.Errorf("codes %v notes %v", got, noteCodesOf(r))
	}
}

// TestNonIntegralAttemptNumbers: NaN, infinities and fractions are not
// attempt numbers; they are reported as such, not read as attempt 0.
func TestNonIntegralAttemptNumbers(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{math.NaN(), "retry.attempt is NaN, want an integer"},
		{math.Inf(1), "retry.attempt is +Inf, want an integer"},
		{math.Inf(-1), "retry.attempt is -Inf, want an integer"},
		{1.5, "retry.attempt has type float, want int"},
		{1e300, "retry.attempt has type float, want int"},
	} {
		at := minimalAttempt("t", 2, 1, "op", 1, 0)
		at.Attributes = slices.DeleteFunc(at.Attributes, func(a model.Attribute) bool { return a.Key == keyAttempt })
		at.Attributes = append(at.Attributes, kv(keyAttempt, model.Float(tc.v)))
		r := Analyze([]model.Span{operationSpan("t", 1, 0, "op", 1, 1000), at})
		if got := codesOf(r); !slices.Equal(got, []Code{CodeInvalidAttribute}) || !strings.Contains(r.Findings[0].Seen, tc.want) {
			t.Errorf("retry.attempt %v: %v %+v", tc.v, got, r.Findings)
		}
		if n := r.Operations[0].Attempts[0].Number; n != 0 {
			t.Errorf("retry.attempt %v read as %d", tc.v, n)
		}
	}
}

// TestSecretsInNamesAndValues: a span name or a value holding a URL is
// quoted redacted in findings.
func TestSecretsInNamesAndValues(t *testing.T) {
	op := operationSpan("t", 1, 0, "op", 1, 1000, kv(keyOutcome, model.String("see http://alice:pw-secret@h.test/?token=tok-secret")))
	op.Name = "GET http://alice:pw-secret@h.test/x?token=tok-secret"
	at := minimalAttempt("t", 2, 1, "op", 1, 0)
	at.Name = op.Name
	at.Attributes = append(at.Attributes, kv(keyErrorClass, model.String("https://u:pw-secret@h.test/?k=tok-secret")))
	r := Analyze([]model.Span{op, at})
	if len(r.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Seen, "pw-secret") || strings.Contains(f.Seen, "tok-secret") {
			t.Errorf("finding %s repeats a secret: %s", f.Code, f.Seen)
		}
	}
	if !slices.ContainsFunc(r.Findings, func(f Finding) bool {
		return strings.Contains(f.Seen, `"GET http://REDACTED:REDACTED@h.test/x?token=REDACTED"`)
	}) {
		t.Errorf("no finding shows the span name redacted: %+v", r.Findings)
	}
}

// TestSpanIDReused: a second delivery of a span id with other content is
// reported; an identical one is a duplicate delivery; attribute order and
// NaN do not make copies differ.
func TestSpanIDReused(t *testing.T) {
	at := minimalAttempt("t", 2, 1, "op", 1, 0)
	at.Attributes = append(at.Attributes, kv("ratio", model.Float(math.NaN())))
	same := at
	same.Attributes = slices.Clone(at.Attributes)
	slices.Reverse(same.Attributes)
	other := at
	other.Attributes = slices.Clone(at.Attributes)
	other.Attributes[0] = kv(keyOperationID, model.String("op-other"))
	other.Name = "POST"

	r := Analyze([]model.Span{operationSpan("t", 1, 0, "op", 1, 1000), at, same})
	if got := codesOf(r); !slices.Equal(got, []Code{CodeDuplicateRequestID}) || r.Spans.Duplicates != 1 {
		t.Errorf("identical copy: %v, %d duplicates", got, r.Spans.Duplicates)
	}
	r = Analyze([]model.Span{operationSpan("t", 1, 0, "op", 1, 1000), at, other})
	if got := codesOf(r); !slices.Equal(got, []Code{CodeSpanIDReused}) {
		t.Fatalf("differing copy: %v", got)
	}
	if f := r.Findings[0]; f.OperationID != "op" || !strings.Contains(f.Seen, "different content (name, attributes)") {
		t.Errorf("finding %+v", f)
	}
}

// TestListsAreBounded: one request id on 10k attempts gives one finding of
// bounded size.
func TestListsAreBounded(t *testing.T) {
	var spans []model.Span
	for i := range 10000 {
		at := minimalAttempt("t", i+1, 0, "op-"+strconv.Itoa(i), 1, 0)
		at.Attributes[1] = kv(keyRequestID, model.String("same"))
		spans = append(spans, at)
	}
	r := Analyze(spans)
	for _, f := range r.Findings {
		if len(f.Seen) > 2000 {
			t.Errorf("%s: %d bytes", f.Code, len(f.Seen))
		}
	}
	if len(r.Notes) != 1 || r.Notes[0].Count != 10000 {
		t.Errorf("notes %+v, want one no-operation-span counted 10000 times", r.Notes)
	}
}
