// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// The transport records through a Recorder; a custom retry loop can too:
// the counters by decision and outcome, the histograms of attempts per
// operation and of durations, in seconds.
func ExampleNewRecorder() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rec, err := metrics.NewRecorder(mp.Meter("example"))
	if err != nil {
		fmt.Println(err)
	}
	ctx := context.Background()
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, Duration: 80 * time.Millisecond})
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn, StatusCode: 200, Duration: 50 * time.Millisecond})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeReturn, Attempts: 2, Duration: 170 * time.Millisecond})

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		fmt.Println(m.Name, m.Unit)
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
			var counts []string
			for _, dp := range sum.DataPoints {
				label, _ := dp.Attributes.Value(attrs.DecisionKey)
				if label.AsString() == "" {
					label, _ = dp.Attributes.Value(attrs.OutcomeKey)
				}
				counts = append(counts, fmt.Sprintf("  %s: %d", label.AsString(), dp.Value))
			}
			slices.Sort(counts)
			fmt.Println(strings.Join(counts, "\n"))
		}
		switch h := m.Data.(type) {
		case metricdata.Histogram[int64]:
			for _, dp := range h.DataPoints {
				fmt.Printf("  count %d, sum %d\n", dp.Count, dp.Sum)
			}
		case metricdata.Histogram[float64]:
			var lines []string
			for _, dp := range h.DataPoints {
				lines = append(lines, fmt.Sprintf("  count %d, sum %.2f s", dp.Count, dp.Sum))
			}
			slices.Sort(lines)
			fmt.Println(strings.Join(lines, "\n"))
		}
	}
	// Output:
	// retry.operations {operation}
	//   return: 1
	// retry.attempts {attempt}
	//   retry: 1
	//   return: 1
	// retry.operation.attempts {attempt}
	//   count 1, sum 2
	// retry.operation.duration s
	//   count 1, sum 0.17 s
	// retry.attempt.duration s
	//   count 1, sum 0.05 s
	//   count 1, sum 0.08 s
}
