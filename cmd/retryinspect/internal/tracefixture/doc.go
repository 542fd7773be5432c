// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package tracefixture crafts span sets for retryinspect's tests with the
// real OpenTelemetry SDK (deterministic ids, explicit timestamps) and writes
// them in the three input formats: through the real stdouttrace exporter,
// and, through the SDK's real OTLP exporter and the Collector's pdata, as
// OTLP JSON lines (the Collector's file exporter) and as Jaeger /api/v3
// answers.
//
// Storm builds a large incident (thousands of operations, one dependency
// storming) in the span model directly, for the scale tests and the
// benchmark of the HTML report.
//
// Only tests import it (those of the command and of its browser tests in
// htmltest), so the command itself does not depend on the SDK.
package tracefixture
