// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// The log events the transport emits with WithLoggerProvider: one
// retry.attempt record per attempt, with exactly the attempt span's
// attributes, in the attempt span's context, timed at the attempt's end;
// one retry.operation record per operation, in the operation span's
// context, timed at the operation's start, with its duration in
// retry.operation.duration_ms. A log reader turns each into a model.Span
// with Log set, so that the inspector reads the attempts and operations
// with the same code as from spans.

// eventNameKey is the attribute that named an event before the OTLP
// LogRecord had an event_name field (OpenTelemetry semantic conventions
// up to 1.26); a record carries either.
const eventNameKey = "event.name"

// logRecord is one log record as a log reader found it.
type logRecord struct {
	event           string
	traceID, spanID string // normalized hex, "" when absent
	time            time.Time
	attrs           []model.Attribute
}

// span converts r. An attempt record ends at its timestamp and starts
// retry.elapsed_ms before it; an operation record starts at its timestamp
// and lasts retry.operation.duration_ms. A record of another event (or
// none) keeps no attributes: it is counted, not read, so that an
// application log record that happens to carry the retry fields (a slog
// bridge over WithLogger) does not count an attempt twice.
func (r *logRecord) span() model.Span {
	s := model.Span{TraceID: r.traceID, SpanID: r.spanID, Name: r.event, Start: r.time, End: r.time, Log: true}
	switch r.event {
	case attrs.LogEventAttempt:
		s.Attributes = r.attrs
		if d, ok := msAttr(r.attrs, string(attrs.ElapsedMsKey)); ok && !r.time.IsZero() {
			s.Start = r.time.Add(-d)
		}
	case attrs.LogEventOperation:
		s.Attributes = r.attrs
		if d, ok := msAttr(r.attrs, string(attrs.OperationDurationMsKey)); ok && !r.time.IsZero() {
			s.End = r.time.Add(d)
		}
		s.Events = refusedHedges(r.attrs)
	default:
		if s.Name == "" {
			s.Name = "log record"
		}
	}
	return s
}

// refusedHedges turns an operation record's retry.hedge.refused, the
// reasons of the hedge_refused events of its span, into those events
// (their reasons only: the record carries neither the attempts nor the
// delays). The list comes as JSON text, as OTLP's JSON form reads to
// text and VictoriaLogs stores an array; one that is not a list of
// reasons (strings, none empty: JSON's null is no reason) gives none,
// and the inspector reads the record without it.
func refusedHedges(kvs []model.Attribute) []model.Event {
	var list []any
	for _, a := range kvs {
		if a.Key == string(attrs.HedgesRefusedKey) {
			if json.Unmarshal([]byte(a.Value.Str), &list) != nil {
				return nil
			}
			break
		}
	}
	events := make([]model.Event, 0, len(list))
	for _, v := range list {
		reason, ok := v.(string)
		if !ok || reason == "" {
			return nil
		}
		events = append(events, model.Event{Name: attrs.EventHedgeRefused,
			Attributes: []model.Attribute{{Key: string(attrs.ReasonKey), Value: model.String(reason)}}})
	}
	if len(events) == 0 {
		return nil
	}
	return events
}

// maxDurationMs is the longest duration in milliseconds a time.Duration
// holds.
const maxDurationMs = math.MaxInt64 / int64(time.Millisecond)

// msAttr reads a duration in milliseconds that is an integer between 0 and
// what a time.Duration holds; anything else is left to the inspector,
// which reports it.
func msAttr(kvs []model.Attribute, key string) (time.Duration, bool) {
	for _, a := range kvs {
		if a.Key != key {
			continue
		}
		if a.Value.Type != model.TypeInt || a.Value.Int < 0 || a.Value.Int > maxDurationMs {
			return 0, false
		}
		return time.Duration(a.Value.Int) * time.Millisecond, true
	}
	return 0, false
}

// checkRecord applies the checks every reader shares to a converted
// record.
func checkRecord(s *model.Span, field string) error {
	if err := checkTime(field, s.Start); err != nil {
		return err
	}
	return checkTime(field, s.End)
}

// errNoResourceLogs is what a JSON object without resourceLogs gets from
// the OTLP logs reader.
var errNoResourceLogs = errors.New("not an OTLP logs request: no resourceLogs")

// appendOTLPLogs decodes one OTLP JSON LogsData (ExportLogsServiceRequest)
// object with the Collector's pdata decoder and appends its records.
func appendOTLPLogs(spans []model.Span, raw []byte) ([]model.Span, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return spans, errors.New("not an OTLP logs request: want a JSON object with resourceLogs")
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	if err != nil {
		return spans, &offsetError{off: 0, err: pdataMessage(err)}
	}
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			for k := range lrs.Len() {
				span, err := fromPlog(lrs.At(k))
				if err != nil {
					return spans, locateRecord(raw, [3]int{i, j, k}, err)
				}
				spans = append(spans, span)
			}
		}
	}
	return spans, nil
}

// fromPlog converts one pdata log record. Its time is timeUnixNano, or
// observedTimeUnixNano when the emitter set none, as a log store does.
func fromPlog(lr plog.LogRecord) (model.Span, error) {
	r := logRecord{event: lr.EventName(), time: unixNano(uint64(lr.Timestamp()))}
	if r.time.IsZero() {
		r.time = unixNano(uint64(lr.ObservedTimestamp()))
	}
	if tid := lr.TraceID(); !tid.IsEmpty() {
		r.traceID = hex.EncodeToString(tid[:])
	}
	if sid := lr.SpanID(); !sid.IsEmpty() {
		r.spanID = hex.EncodeToString(sid[:])
	}
	r.attrs = make([]model.Attribute, 0, lr.Attributes().Len())
	for k, v := range lr.Attributes().All() {
		if k == eventNameKey {
			if r.event == "" {
				r.event = v.AsString()
			}
			continue
		}
		r.attrs = append(r.attrs, model.Attribute{Key: k, Value: pdataValue(v)})
	}
	s := r.span()
	return s, checkRecord(&s, "timeUnixNano")
}

// The nesting of OTLP JSON down to a log record.
var otlpLogLevels = [...]otlpKey{
	resourceLogsKey,
	{"scopeLogs", "scope_logs", &otlpKey{json: "deprecatedScopeLogs", proto: "deprecated_scope_logs"}},
	{json: "logRecords", proto: "log_records"},
}

// resourceLogsKey is an OTLP logs request's top-level key.
var resourceLogsKey = otlpKey{json: "resourceLogs", proto: "resource_logs"}

// locateRecord returns err at the position of the record at index at.
func locateRecord(raw []byte, at [3]int, err error) error {
	path := "resourceLogs[" + strconv.Itoa(at[0]) + "].scopeLogs[" + strconv.Itoa(at[1]) + "].logRecords[" + strconv.Itoa(at[2]) + "]"
	return locate(raw, otlpLogLevels, at, path, err)
}
