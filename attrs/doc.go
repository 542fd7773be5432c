// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package attrs is the vocabulary of otelretry: the attribute keys that
// attempt and operation spans, log records and metrics carry, and the closed
// value sets (Decision, Outcome, ErrorClass) those keys take.
//
// Every other package (the transport, the metrics recorder, retryinspect)
// reads names from here, so the three signals cannot disagree. Keys that the
// OpenTelemetry semantic conventions already define (http.request.method,
// url.full, ...) are re-exported from semconv rather than spelled again.
//
// The value sets are closed on purpose: a dashboard can only group by a
// label whose values are known in advance, and a reader of a trace should
// never have to interpret a free-form message.
package attrs
