// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/otelretry/otelretry-go/attrs"
)

// Summarize computes the summary of ops as Analyze does for all of a
// report's operations; the HTML report uses it to describe the operations
// it does not draw.
func Summarize(ops []Operation) Summary { return summarize(ops) }

func summarize(ops []Operation) Summary {
	var (
		decisions    = map[string]int{}
		errorClasses = map[string]int{}
		statusCount  = map[int64]int{}
		outcomes     = map[string]int{}
		reasons      = map[string]int{}
		perOperation = map[int64]int{}
		statusOrder  []int64
		attempts     int
	)
	for _, op := range ops {
		if op.Outcome != "" {
			outcomes[op.Outcome]++
		}
		perOperation[int64(len(op.Attempts))]++
		for _, at := range op.Attempts {
			attempts++
			if at.Decision != "" {
				decisions[at.Decision]++
			}
			if at.Reason != "" {
				reasons[at.Reason]++
			}
			if at.ErrorClass != "" {
				errorClasses[at.ErrorClass]++
			}
			if at.StatusCode != nil {
				if statusCount[*at.StatusCode] == 0 {
					statusOrder = append(statusOrder, *at.StatusCode)
				}
				statusCount[*at.StatusCode]++
			}
		}
	}
	slices.Sort(statusOrder)
	statuses := make(map[string]int, len(statusCount))
	for code, n := range statusCount {
		statuses[strconv.FormatInt(code, 10)] = n
	}
	counts := slices.Sorted(maps.Keys(perOperation))
	perOp := make(map[string]int, len(perOperation))
	for n, ops := range perOperation {
		perOp[strconv.FormatInt(n, 10)] = ops
	}
	return Summary{
		Operations:           len(ops),
		Attempts:             attempts,
		Decisions:            shares(decisions, vocabulary(attrs.Decisions()), attempts),
		ErrorClasses:         shares(errorClasses, vocabulary(attrs.ErrorClasses()), attempts),
		StatusCodes:          shares(statuses, formatInts(statusOrder), attempts),
		Reasons:              shares(reasons, vocabulary(attrs.Reasons()), attempts),
		Outcomes:             shares(outcomes, vocabulary(attrs.Outcomes()), len(ops)),
		AttemptsPerOperation: shares(perOp, formatInts(counts), len(ops)),
		RetryRatio:           ratio(decisions[string(attrs.DecisionRetry)], attempts),
		DeadlineRatio:        ratio(outcomes[string(attrs.OutcomeDeadlineExceeded)], len(ops)),
	}
}

// shares lists the counted values: known values in order first, then any
// other value (outside the vocabulary) by name.
func shares(counts map[string]int, order []string, total int) []Share {
	out := []Share{}
	add := func(v string) {
		if n := counts[v]; n > 0 {
			out = append(out, Share{Value: v, Count: n, Share: ratio(n, total).Value})
		}
	}
	for _, v := range order {
		add(v)
	}
	var rest []string
	for v := range counts {
		if !slices.Contains(order, v) {
			rest = append(rest, v)
		}
	}
	slices.SortFunc(rest, cmp.Compare)
	for _, v := range rest {
		add(v)
	}
	return out
}

func ratio(n, total int) Ratio {
	r := Ratio{Count: n, Total: total}
	if total > 0 {
		r.Value = math.Round(float64(n)/float64(total)*1e4) / 1e4
	}
	return r
}

func vocabulary[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func formatInts(values []int64) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strconv.FormatInt(v, 10)
	}
	return out
}
