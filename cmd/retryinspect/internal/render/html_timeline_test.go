// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// oneAttemptOperation is one operation of one attempt (status 200, return) with the
// given method and url.full, in its own trace.
func oneAttemptOperation(n int, method, url string) []model.Span {
	trace, opID, at := fmt.Sprintf("t%d", n), fmt.Sprintf("op%d", n), fmt.Sprintf("a%d", n)
	id := fmt.Sprintf("op-%d", n)
	start := int64(n * 1000)
	return []model.Span{
		span(trace, at, opID, start, start+10,
			str(string(attrs.OperationIDKey), id), str(string(attrs.RequestIDKey), id+"/attempt-1"), num(string(attrs.AttemptKey), 1),
			str(string(attrs.HTTPRequestMethodKey), method), num(string(attrs.HTTPResponseStatusCodeKey), 200),
			num(string(attrs.ElapsedMsKey), 10), num(string(attrs.RemainingMsKey), 400),
			str(string(attrs.DecisionKey), string(attrs.DecisionReturn))),
		span(trace, opID, "", start, start+11,
			str(string(attrs.OperationIDKey), id), str(string(attrs.OutcomeKey), string(attrs.OutcomeReturn)),
			str(string(attrs.HTTPRequestMethodKey), method), str(string(attrs.ServerAddressKey), "h.test"),
			num(string(attrs.ServerPortKey), 80), num(string(attrs.AttemptsKey), 1),
			str(string(attrs.URLFullKey), url), num(string(attrs.DeadlineMsKey), 400)),
	}
}

// TestOnlyIdenticalOperationsShareATimeline: only identical operations
// (same method, route, outcome, findings, steps) share a timeline. Two
// whose method and route differ, but joined with the NUL the key was
// joined with read the same (hostile input), shared one, and the second
// one's method and URL appeared nowhere on the page.
func TestOnlyIdenticalOperationsShareATimeline(t *testing.T) {
	a := oneAttemptOperation(1, "GET\x00http://h.test/a", "http://h.test/b")
	b := oneAttemptOperation(2, "GET", "HTTP://H.TEST/A\x00http://h.test/b")
	r := inspect.Analyze(append(a, b...))
	if len(r.Operations) != 2 {
		t.Fatalf("%d operations, want 2", len(r.Operations))
	}
	if r.Operations[0].Method == r.Operations[1].Method && r.Operations[0].URL == r.Operations[1].URL {
		t.Fatalf("the fixture's operations are identical: %q %q", r.Operations[0].Method, r.Operations[0].URL)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	articles := regexp.MustCompile(`data-role="operation" data-count="(\d+)"`).FindAllStringSubmatch(page, -1)
	if len(articles) != 2 {
		var counts []string
		for _, m := range articles {
			counts = append(counts, m[1])
		}
		t.Errorf("operations %q (method %q url %q) and %q (method %q url %q) share a timeline: %d timelines, counts %v; %s",
			r.Operations[0].ID, r.Operations[0].Method, r.Operations[0].URL,
			r.Operations[1].ID, r.Operations[1].Method, r.Operations[1].URL,
			len(articles), counts, regexp.MustCompile(`data-role="ops-note">[^<]*`).FindString(page))
	}
	// Each operation's title (method and URL, as the text report escapes them) is on the page.
	for _, op := range r.Operations {
		if want := Escape(op.ID + "  " + op.Method + " " + op.URL); !strings.Contains(page, want) {
			t.Errorf("the page lacks the title %q of operation %q", want, op.ID)
		}
	}
}
