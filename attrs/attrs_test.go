// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
)

func TestClosedSets(t *testing.T) {
	for _, d := range attrs.Decisions() {
		if !d.Valid() {
			t.Errorf("%s is listed but not valid", d)
		}
		if d.Terminal() && !d.Outcome().Valid() {
			t.Errorf("terminal decision %s has no valid outcome", d)
		}
	}
	terminal := 0
	for _, d := range attrs.Decisions() {
		if d.Terminal() {
			terminal++
		} else if d.Outcome() != "" {
			t.Errorf("decision %s ends nothing, yet has outcome %s", d, d.Outcome())
		}
	}
	if len(attrs.Outcomes()) != terminal || terminal != len(attrs.Decisions())-2 {
		t.Errorf("outcomes must be the decisions minus retry and superseded")
	}
	for _, r := range attrs.Reasons() {
		if !r.Valid() || r.Attribute().Key != attrs.ReasonKey {
			t.Errorf("reason %s is listed but not valid", r)
		}
	}
	for _, p := range attrs.HintProblems() {
		if !p.Valid() || p.Attribute().Key != attrs.RetryHintProblemKey {
			t.Errorf("hint problem %s is listed but not valid", p)
		}
	}
	for _, s := range attrs.KeySources() {
		if !s.Valid() || s.Attribute().Key != attrs.IdempotencyKeySourceKey {
			t.Errorf("key source %s is listed but not valid", s)
		}
	}
	if got := attrs.KeySources(); !slices.Equal(got, []attrs.KeySource{attrs.KeySourceGenerated, attrs.KeySourceCaller}) {
		t.Errorf("KeySources() = %v", got)
	}
	for _, r := range []attrs.Reason{attrs.ReasonKeyInProgress, attrs.ReasonKeyReused, attrs.ReasonKeyConflict} {
		if !r.Valid() {
			t.Errorf("reason %s of the idempotency-key contract is not in the closed set", r)
		}
	}
	for _, bad := range []string{"", "Retry", "failed"} {
		if attrs.Decision(bad).Valid() || attrs.Outcome(bad).Valid() || attrs.ErrorClass(bad).Valid() || attrs.Reason(bad).Valid() ||
			attrs.HintProblem(bad).Valid() || attrs.KeySource(bad).Valid() {
			t.Errorf("%q accepted", bad)
		}
	}
	if kv := attrs.DecisionCheckState.Attribute(); kv.Key != "retry.decision" || kv.Value.AsString() != "check_state" {
		t.Errorf("attribute = %v", kv)
	}
}

func TestMethods(t *testing.T) {
	all, safe := attrs.Methods(), attrs.SafeMethods()
	if want := []string{"GET", "HEAD", "OPTIONS", "TRACE", "POST", "PUT", "PATCH", "DELETE", "CONNECT"}; !slices.Equal(all, want) {
		t.Errorf("Methods() = %v, want %v", all, want)
	}
	if want := []string{"GET", "HEAD", "OPTIONS", "TRACE"}; !slices.Equal(safe, want) {
		t.Errorf("SafeMethods() = %v, want %v", safe, want)
	}
	// Each call returns a copy: a caller's change reaches no other caller.
	all[0], safe[0] = "BREW", "BREW"
	if attrs.Methods()[0] != "GET" || attrs.SafeMethods()[0] != "GET" {
		t.Error("Methods and SafeMethods share their slice with the caller")
	}
}

// _OTHER and the key of the method as sent are the semantic conventions'.
func TestMethodOtherIsSemconvs(t *testing.T) {
	if attrs.MethodOther != semconv.HTTPRequestMethodOther.Value.AsString() {
		t.Errorf("MethodOther %q is not semconv's", attrs.MethodOther)
	}
	if attrs.HTTPRequestMethodOriginalKey != semconv.HTTPRequestMethodOriginalKey {
		t.Errorf("method_original key %q is not semconv's", attrs.HTTPRequestMethodOriginalKey)
	}
}

// docs/telemetry.md lists each closed set the attempt span carries in its
// row: every value, so that a value added here is documented there (the
// retry.decision row lacked throttled).
func TestTheTelemetryPageListsEveryValue(t *testing.T) {
	page, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.Lines(string(page)) {
		if key, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` |"); ok && strings.HasPrefix(line, "| `") {
			rows[key] = line
		}
	}
	for key, values := range map[string][]string{
		string(attrs.DecisionKey):   valuesOf(attrs.Decisions()),
		string(attrs.ErrorClassKey): valuesOf(attrs.ErrorClasses()),
	} {
		row, ok := rows[key]
		if !ok {
			t.Errorf("docs/telemetry.md has no row for %s", key)
			continue
		}
		for _, v := range values {
			if !strings.Contains(row, "`"+v+"`") {
				t.Errorf("docs/telemetry.md's %s row lacks %q:\n%s", key, v, row)
			}
		}
	}
}

func valuesOf[V ~string](vs []V) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// docs/telemetry.md names every key attrs declares (attribute.Key("...")
// in attrs.go), so that a key the code records has a row or a sentence
// there (retry.hedge.delay_ms, on the hedge events, was named in
// docs/hedging.md alone: a reviewer's find).
func TestTheTelemetryPageNamesEveryKey(t *testing.T) {
	page, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), "attrs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := 0
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, isLit := call.Args[0].(*ast.BasicLit)
		if !ok || sel.Sel.Name != "Key" || !isLit || lit.Kind != token.STRING {
			return true
		}
		key, _ := strconv.Unquote(lit.Value)
		keys++
		// A row may name siblings short: `retry.evidence.protocol`, `.code`.
		prefix, last := key[:strings.LastIndex(key, ".")+1], key[strings.LastIndex(key, "."):]
		short := strings.Contains(string(page), "`"+prefix) && strings.Contains(string(page), "`"+last+"`")
		if !strings.Contains(string(page), "`"+key+"`") && !short {
			t.Errorf("docs/telemetry.md does not name %s", key)
		}
		return true
	})
	if keys < 30 {
		t.Fatalf("found %d keys in attrs.go: the parse missed them", keys)
	}
	// The keys attrs re-exports from semconv, which the parse cannot read.
	for _, k := range []attribute.Key{attrs.HTTPRequestMethodKey, attrs.HTTPResponseStatusCodeKey, attrs.HTTPRequestResendCountKey,
		attrs.URLFullKey, attrs.ServerAddressKey, attrs.ServerPortKey, attrs.ErrorTypeKey, attrs.HTTPRequestMethodOriginalKey,
		attrs.ExceptionTypeKey} {
		if !strings.Contains(string(page), "`"+string(k)+"`") {
			t.Errorf("docs/telemetry.md does not name %s", k)
		}
	}
}

// Outcome is "" for a decision outside the set, as for retry and
// superseded: a value of a caller's own is no outcome (it returned the
// value as one: a reviewer's find).
func TestADecisionOutsideTheSetHasNoOutcome(t *testing.T) {
	for _, d := range []attrs.Decision{"bogus", "RETRY", "", attrs.DecisionRetry, attrs.DecisionSuperseded} {
		if o := d.Outcome(); o != "" {
			t.Errorf("Decision(%q).Outcome() = %q, want none", d, o)
		}
	}
	for _, d := range attrs.Decisions() {
		if o := d.Outcome(); d.Terminal() != (o != "") || (o != "" && !o.Valid()) {
			t.Errorf("Decision(%q): Terminal %v, Outcome %q", d, d.Terminal(), o)
		}
	}
}
