// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/redact"
	"github.com/otelretry/otelretry-go/metrics"
)

// attemptEvent is the record of one network attempt. The attempt span, the
// log record and the metrics are all derived from it (see fields), so the
// three signals cannot disagree.
type attemptEvent struct {
	attempt   int              // the attempt's number, counting across redirect hops
	status    int              // 0 when no response arrived
	class     attrs.ErrorClass // "" when a response arrived
	evidence  Evidence         // set with a class the protocol proved (classifier)
	elapsed   time.Duration
	remaining time.Duration // operation time left before the call
	verdict   verdict
	writes    int32    // writes on the wire (httptrace); 0 when the base reports none
	url       *url.URL // the prepared request's URL, as it went on the wire
	requestID string   // "" until fields needs it: the span and the logs share it

	retryAfter      time.Duration
	hasRetryAfter   bool
	retryAfterError error // set when the header was present but malformed
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// sanitizedURL is the attempt's url.full: its prepared URL, sanitized. It
// is the operation's when the attempt kept the caller's URL.
func (ev *attemptEvent) sanitizedURL(op *operation) string {
	if ev.url == nil || ev.url == op.req.URL {
		return op.sanitizedURL()
	}
	return SanitizeURL(ev.url)
}

// urlChanges reports whether sanitizing changes the attempt's URL, which
// otelhttp records raw on its CLIENT span.
func (ev *attemptEvent) urlChanges(op *operation) bool {
	if ev.url == nil {
		return redact.Changes(op.req.URL)
	}
	return redact.Changes(ev.url)
}

// errorType is the semantic conventions' error.type of the attempt: its
// error class, or the status code of an answer that is not a 2xx or 3xx;
// "" for a success.
func (ev *attemptEvent) errorType() string {
	switch {
	case ev.class != "":
		return string(ev.class)
	case ev.status >= 400 || ev.status < 200:
		return strconv.Itoa(ev.status)
	}
	return ""
}

// fields returns the attempt event as attributes, appended to kv: the one
// list that the attempt span and the log record both carry. On otelhttp's
// CLIENT span (onClientSpan) the fields otelhttp writes there itself, with
// the same values, are left to it: the method, unless it is outside the
// standard set, the status code, error.type (from the status, or from the
// attempt error's ErrorType) and url.full, unless sanitizing changes it.
// The span then carries the same list, written once.
func (op *operation) fields(kv []attribute.KeyValue, ev *attemptEvent, onClientSpan bool) []attribute.KeyValue {
	id := op.opID()
	if ev.requestID == "" {
		ev.requestID = RequestID(id, ev.attempt)
	}
	kv = append(kv,
		attrs.OperationIDKey.String(id),
		attrs.RequestIDKey.String(ev.requestID),
		attrs.AttemptKey.Int(ev.attempt),
	)
	if !onClientSpan || attrs.MethodValue(op.policy.method) != op.policy.method {
		// otelhttp names a method that differs from a standard one only in
		// case by the standard name ("get" as GET): written over it.
		kv = attrs.AppendMethod(kv, op.policy.method)
	}
	if !onClientSpan || ev.urlChanges(op) {
		kv = append(kv, attrs.URLFullKey.String(ev.sanitizedURL(op)))
	}
	kv = append(kv, attrs.RemainingMsKey.Int64(ms(ev.remaining)))
	if ev.attempt > 1 {
		kv = append(kv, attrs.HTTPRequestResendCountKey.Int(ev.attempt-1))
	}
	if ev.class != "" {
		kv = append(kv, ev.class.Attribute())
		if ev.evidence.Protocol != "" || ev.evidence.Name != "" {
			kv = append(kv,
				attrs.EvidenceProtocolKey.String(ev.evidence.Protocol),
				attrs.EvidenceCodeKey.Int64(int64(ev.evidence.Code)),
				attrs.EvidenceNameKey.String(ev.evidence.Name))
		}
	} else if !onClientSpan {
		kv = append(kv, attrs.HTTPResponseStatusCodeKey.Int(ev.status))
	}
	if t := ev.errorType(); t != "" && !onClientSpan {
		kv = append(kv, attrs.ErrorTypeKey.String(t))
	}
	kv = append(kv, attrs.ElapsedMsKey.Int64(ms(ev.elapsed)), ev.verdict.decision.Attribute(), ev.verdict.reason.Attribute())
	if ev.hasRetryAfter {
		kv = append(kv, attrs.RetryAfterMsKey.Int64(ms(ev.retryAfter)))
	}
	if ev.verdict.decision == attrs.DecisionRetry {
		kv = append(kv, attrs.BackoffMsKey.Int64(ms(ev.verdict.pause)))
	}
	if ev.writes > 0 {
		kv = append(kv, attrs.WireWritesKey.Int(int(ev.writes)))
	}
	return kv
}

// record writes the attempt event on the attempt's span (all its fields in
// one call, and only when the span records), the logs and the metrics. own
// says the span is the transport's INTERNAL attempt span, which it also
// ends and gives its status; otherwise the span is otelhttp's CLIENT span,
// which otelhttp ends and gives its status, or none.
func (op *operation) record(span trace.Span, own bool, ev *attemptEvent) {
	var kv []attribute.KeyValue
	if span.IsRecording() { // once: the SDK locks the span for it
		kv = op.fields(op.attrs(), ev, !own)
		span.SetAttributes(kv...)
		op.addEvents(span, ev)
		if own {
			setAttemptStatus(span, ev)
		}
	}
	if !own {
		// otelhttp's span carries part of the list, and writes the rest
		// itself: the logs carry all of it (see logAttempt).
		kv = nil
	}
	op.logAttempt(span, kv, ev)
	op.t.metrics.RecordAttempt(op.ctx, metrics.Attempt{
		Method:        op.policy.method,
		ServerAddress: op.metricServer(),
		Labels:        op.tel.labels,
		Decision:      ev.verdict.decision,
		ErrorClass:    ev.class,
		StatusCode:    ev.status,
		ErrorType:     ev.errorType(),
		Duration:      ev.elapsed,
	})
	if own {
		span.End()
	}
}

// addEvents adds the attempt span's events: the extra writes on the wire,
// a malformed Retry-After, a body that could not be replayed.
func (op *operation) addEvents(span trace.Span, ev *attemptEvent) {
	for i := int32(1); i < ev.writes; i++ {
		span.AddEvent(attrs.EventWireResend, trace.WithAttributes(attrs.WireWritesKey.Int(int(i+1))))
	}
	if ev.retryAfterError != nil {
		span.AddEvent(attrs.EventRetryAfterInvalid, trace.WithAttributes(attribute.String("error", ev.retryAfterError.Error())))
	}
	if ev.verdict.reason == attrs.ReasonNotReplayable {
		span.AddEvent(attrs.EventBodyNotReplayable)
	}
}

// setAttemptStatus gives the transport's own attempt span its status, as
// otelhttp gives its CLIENT span.
func setAttemptStatus(span trace.Span, ev *attemptEvent) {
	if ev.class != "" {
		span.SetStatus(codes.Error, string(ev.class))
	} else if ev.status >= 400 {
		span.SetStatus(codes.Error, http.StatusText(ev.status))
	}
}

// log writes the attempt's slog record: the attempt span's fields (kv),
// plus the trace and span ids. Only sanitized data is logged: no URL query
// values, headers or bodies.
func (op *operation) log(l *slog.Logger, level slog.Level, span trace.Span, kv []attribute.KeyValue) {
	fields := make([]slog.Attr, 0, len(kv)+2)
	for _, f := range kv {
		fields = append(fields, slogAttr(f))
	}
	if sc := span.SpanContext(); sc.IsValid() {
		fields = append(fields, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	l.LogAttrs(op.ctx, level, "retry attempt", fields...)
}

// slogAttr converts an attribute to a log attribute of the same type.
func slogAttr(kv attribute.KeyValue) slog.Attr {
	k := string(kv.Key)
	switch kv.Value.Type() {
	case attribute.BOOL:
		return slog.Bool(k, kv.Value.AsBool())
	case attribute.INT64:
		return slog.Int64(k, kv.Value.AsInt64())
	case attribute.FLOAT64:
		return slog.Float64(k, kv.Value.AsFloat64())
	case attribute.STRING:
		return slog.String(k, kv.Value.AsString())
	default:
		return slog.String(k, kv.Value.Emit())
	}
}
