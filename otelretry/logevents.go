// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// The log events (WithLoggerProvider) and the slog records (WithLogger)
// share one severity: INFO for return, WARN for retry, ERROR for every
// other decision, each of which ends the operation without the answer it
// wanted (check_state included: the write's outcome is unknown). An
// operation event is INFO when its outcome is return, else ERROR.

// attemptSeverity is the severity of an attempt's records.
func attemptSeverity(d attrs.Decision) log.Severity {
	switch d {
	case attrs.DecisionReturn:
		return log.SeverityInfo
	case attrs.DecisionRetry:
		return log.SeverityWarn
	}
	return log.SeverityError
}

// operationSeverity is the severity of an operation's event.
func operationSeverity(o attrs.Outcome) log.Severity {
	if o == attrs.OutcomeReturn {
		return log.SeverityInfo
	}
	return log.SeverityError
}

// slogLevel is the slog level of a severity attemptSeverity returns.
func slogLevel(s log.Severity) slog.Level {
	switch s {
	case log.SeverityInfo:
		return slog.LevelInfo
	case log.SeverityWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// severityText is the text of a severity attemptSeverity or
// operationSeverity returns, as slog names its levels.
func severityText(s log.Severity) string {
	switch s {
	case log.SeverityInfo:
		return "INFO"
	case log.SeverityWarn:
		return "WARN"
	}
	return "ERROR"
}

// logAttempt writes the attempt's slog record (WithLogger) and its log
// event (WithLoggerProvider), each only when its logger is enabled for it.
// Both carry one list, the attempt span's, built at most once: kv when the
// span has the whole list already, else built here.
func (op *operation) logAttempt(span trace.Span, kv []attribute.KeyValue, ev *attemptEvent) {
	l, events := op.t.cfg.logger, op.t.cfg.events
	if l == nil && events == nil {
		return
	}
	sev := attemptSeverity(ev.verdict.decision)
	level := slogLevel(sev)
	logs := l != nil && l.Enabled(op.ctx, level)
	emits := events != nil && events.Enabled(op.ctx, log.EnabledParameters{Severity: sev, EventName: attrs.LogEventAttempt})
	if !logs && !emits {
		return
	}
	if kv == nil {
		// The span copied its attributes, if it took any: the buffer is
		// free again.
		kv = op.fields(op.attrs(), ev, false)
	}
	if logs {
		op.log(l, level, span, kv)
	}
	if emits {
		ctx := op.ctx
		if span.SpanContext().IsValid() {
			ctx = trace.ContextWithSpan(ctx, span)
		}
		var r log.Record
		r.SetEventName(attrs.LogEventAttempt)
		r.SetTimestamp(op.attemptEnd(ev))
		r.SetSeverity(sev)
		r.SetSeverityText(severityText(sev))
		r.SetBody(attribute.StringValue("retry attempt"))
		r.AddAttributes(kv...)
		events.Emit(ctx, r)
	}
}

// attemptEnd is the wall-clock time at which the attempt's response
// headers, or its failure, came: its start (the deadline less the time
// left before it) plus its elapsed time.
func (op *operation) attemptEnd(ev *attemptEvent) time.Time {
	return op.clock.start.Add(op.clock.limit - ev.remaining + ev.elapsed)
}

// logOperation emits the operation's log event, if the Logger is enabled
// for it: in the operation span's context, timed at the operation's start,
// with its duration (now, since the start), the operation span's
// attributes and the verdict's reason.
func (op *operation) logOperation(v verdict, errorType string, now time.Duration) {
	events := op.t.cfg.events
	if events == nil {
		return
	}
	outcome := v.decision.Outcome()
	sev := operationSeverity(outcome)
	if !events.Enabled(op.ctx, log.EnabledParameters{Severity: sev, EventName: attrs.LogEventOperation}) {
		return
	}
	kv := op.endFields(op.startFields(op.attrs()), outcome, errorType)
	kv = append(kv, v.reason.Attribute(), attrs.OperationDurationMsKey.Int64(ms(now)))
	var r log.Record
	r.SetEventName(attrs.LogEventOperation)
	r.SetTimestamp(op.clock.start)
	r.SetSeverity(sev)
	r.SetSeverityText(severityText(sev))
	r.SetBody(attribute.StringValue("retry operation"))
	r.AddAttributes(kv...)
	events.Emit(op.ctx, r)
}
