// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// The transport records through a Recorder; a custom retry loop can too.
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
	}
	// Output:
	// retry.operations {operation}
	// retry.attempts {attempt}
	// retry.operation.attempts {attempt}
	// retry.operation.duration s
	// retry.attempt.duration s
}
