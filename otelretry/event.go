package otelretry

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// attemptEvent is the record of one network attempt. The attempt span, the
// log record and the metrics are all derived from it, so the three signals
// cannot disagree.
type attemptEvent struct {
	attempt   int
	status    int              // 0 when no response arrived
	class     attrs.ErrorClass // "" when a response arrived
	elapsed   time.Duration
	remaining time.Duration // budget left before the call
	decision  attrs.Decision
	backoff   time.Duration // set when decision is retry

	retryAfter      time.Duration
	hasRetryAfter   bool
	retryAfterError error // set when the header was present but malformed
	notReplayable   bool  // a retry was due but the body cannot be sent again
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// record writes the event to the attempt span (all its attributes in one
// call, and only when the span records), the log and the metrics, and ends
// the span.
func (op *operation) record(span trace.Span, ev *attemptEvent) {
	if span.IsRecording() {
		id := op.opID()
		kv := append(op.attrs(),
			attrs.OperationIDKey.String(id),
			attrs.RequestIDKey.String(RequestID(id, ev.attempt)),
			attrs.AttemptKey.Int(ev.attempt),
			attrs.HTTPRequestMethodKey.String(op.method),
			attrs.RemainingMsKey.Int64(ms(ev.remaining)),
		)
		if ev.attempt > 1 {
			kv = append(kv, attrs.HTTPRequestResendCountKey.Int(ev.attempt-1))
		}
		if ev.class != "" {
			kv = append(kv, ev.class.Attribute())
		} else {
			kv = append(kv, attrs.HTTPResponseStatusCodeKey.Int(ev.status))
		}
		kv = append(kv, attrs.ElapsedMsKey.Int64(ms(ev.elapsed)), ev.decision.Attribute())
		if ev.hasRetryAfter {
			kv = append(kv, attrs.RetryAfterMsKey.Int64(ms(ev.retryAfter)))
		}
		if ev.decision == attrs.DecisionRetry {
			kv = append(kv, attrs.BackoffMsKey.Int64(ms(ev.backoff)))
		}
		span.SetAttributes(kv...)
		if ev.retryAfterError != nil {
			span.AddEvent("retry_after_invalid", trace.WithAttributes(attribute.String("error", ev.retryAfterError.Error())))
		}
		if ev.notReplayable {
			span.AddEvent("body_not_replayable")
		}
		if ev.class != "" {
			span.SetStatus(codes.Error, string(ev.class))
		} else if ev.status >= 400 {
			span.SetStatus(codes.Error, http.StatusText(ev.status))
		}
	}
	if l := op.t.cfg.logger; l != nil {
		op.log(l, span, ev)
	}
	op.t.metrics.RecordAttempt(op.ctx, metrics.Attempt{
		Method:        op.method,
		ServerAddress: op.metricServer(),
		Labels:        op.labels,
		Decision:      ev.decision,
		ErrorClass:    ev.class,
		StatusCode:    ev.status,
		Duration:      ev.elapsed,
	})
	span.End()
}

// log writes one record per attempt with the attempt span's fields. Only
// sanitized data is logged: no URL query values, headers or bodies.
func (op *operation) log(l *slog.Logger, span trace.Span, ev *attemptEvent) {
	level := slog.LevelInfo
	if ev.decision.Terminal() && ev.decision != attrs.DecisionReturn {
		level = slog.LevelWarn
	}
	if !l.Enabled(op.ctx, level) {
		return
	}
	fields := make([]slog.Attr, 0, 14)
	fields = append(fields,
		slog.String(string(attrs.OperationIDKey), op.opID()),
		slog.String(string(attrs.RequestIDKey), RequestID(op.opID(), ev.attempt)),
		slog.Int(string(attrs.AttemptKey), ev.attempt),
		slog.String(string(attrs.HTTPRequestMethodKey), op.method),
		slog.String(string(attrs.URLFullKey), op.sanitizedURL()),
	)
	if ev.class != "" {
		fields = append(fields, slog.String(string(attrs.ErrorClassKey), string(ev.class)))
	} else {
		fields = append(fields, slog.Int(string(attrs.HTTPResponseStatusCodeKey), ev.status))
	}
	fields = append(fields,
		slog.Int64(string(attrs.ElapsedMsKey), ms(ev.elapsed)),
		slog.Int64(string(attrs.RemainingMsKey), ms(ev.remaining)),
		slog.String(string(attrs.DecisionKey), string(ev.decision)),
	)
	if ev.hasRetryAfter {
		fields = append(fields, slog.Int64(string(attrs.RetryAfterMsKey), ms(ev.retryAfter)))
	}
	if ev.decision == attrs.DecisionRetry {
		fields = append(fields, slog.Int64(string(attrs.BackoffMsKey), ms(ev.backoff)))
	}
	if sc := span.SpanContext(); sc.IsValid() {
		fields = append(fields, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	l.LogAttrs(op.ctx, level, "retry attempt", fields...)
}
