// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// fanOut is n operation spans of one id in flight together (each a
// second long, from one instant; the later ones marked as repeats, as
// the transport counts them), each with one attempt; number gives the
// i-th its attempt's number.
func fanOut(n int, number func(i int) int64) []model.Span {
	spans := make([]model.Span, 0, 2*n)
	for i := range n {
		var repeat []model.Attribute
		if i > 0 {
			repeat = append(repeat, kv(keyRepeat, model.Int(int64(i))))
		}
		spans = append(spans, operationSpan("t", 2*i+1, 0, "job", 1, 1000, repeat...),
			minimalAttempt("t", 2*i+2, 2*i+1, "job", number(i), 0))
	}
	return spans
}

// Operations of one id in flight together take their numbers from one
// run: between them 1, 2, ... n, none lost (no finding), in time linear
// in the input; a number missing from the run is one finding, on its
// first operation.
func TestOperationsInFlightTogetherNumberAsOneRun(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 10_000
	}
	if r := Analyze(fanOut(n, func(i int) int64 { return int64(n - i) })); len(r.Findings) != 0 || len(r.Operations) != n {
		t.Errorf("%d operations, findings %v; want %d and none", len(r.Operations), codesOf(r), n)
	}
	gap := func(i int) int64 {
		if i == 4 {
			return int64(n + 1) // 5 lost, n+1 taken
		}
		return int64(i + 1)
	}
	if r := Analyze(fanOut(n, gap)); len(r.Findings) != 1 || r.Findings[0].Code != CodeAttemptNumbering {
		t.Errorf("findings %v; want one %s", codesOf(r), CodeAttemptNumbering)
	}
}

// docs/retryinspect.md: "linear analysis" on hostile or huge input. n
// sequential operations of one id (one attempt each) beside n attempt
// spans of that id whose operation span is absent: each operation asks
// whether it ran beside the lost attempts, which are read once (read for
// each, 100k did not end within 30 s).
func TestOperationsBesideALostOneOfTheirIDAreReadInLinearTime(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 10_000
	}
	var spans []model.Span
	for i := range n {
		op := operationSpan("t", 2*i+1, 0, "job", 1, 1000)
		op.Start = hostileBase.Add(time.Duration(10*i) * time.Millisecond)
		op.End = op.Start.Add(5 * time.Millisecond)
		spans = append(spans, op, minimalAttempt("t", 2*i+2, 2*i+1, "job", 1, int64(10*i+1)))
	}
	for i := range n {
		// Under span 10n-1, which the input lacks.
		spans = append(spans, minimalAttempt("t", 10*n+i, 10*n-1, "job", int64(i+2), int64(10*i+7)))
	}
	r := Analyze(spans)
	if len(r.Operations) != n+1 {
		t.Errorf("%d operations, want %d", len(r.Operations), n+1)
	}
}
