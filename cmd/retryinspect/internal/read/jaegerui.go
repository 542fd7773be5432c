// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Jaeger's own query API, /api/traces, answers in the JSON of Jaeger's v1
// model: {"data": [trace, ...], "errors": [...]}, each trace its spans and
// the processes (services) that recorded them. It is the JSON the Jaeger
// UI shows as a trace's "Trace JSON" and takes as a "JSON File" upload, so
// it is what a trace saved from the UI and passed on holds. Jaeger writes
// it from OTLP with the OpenTelemetry Collector's Jaeger translator, whose
// mapping this reader undoes: the span kind, status, scope and trace state
// become tags, events become logs whose "event" field is the name, the
// parent becomes a CHILD_OF reference, times are in microseconds.
type (
	jaegerUIAnswer struct {
		Data   []jaegerUITrace `json:"data"`
		Errors []jaegerUIError `json:"errors"`
	}
	jaegerUITrace struct {
		TraceID   string                     `json:"traceID"`
		Spans     []jaegerUISpan             `json:"spans"`
		Processes map[string]jaegerUIProcess `json:"processes"`
	}
	jaegerUISpan struct {
		TraceID       string              `json:"traceID"`
		SpanID        string              `json:"spanID"`
		OperationName string              `json:"operationName"`
		References    []jaegerUIReference `json:"references"`
		StartTime     json.RawMessage     `json:"startTime"`
		Duration      json.RawMessage     `json:"duration"`
		Tags          []jaegerUITag       `json:"tags"`
		Logs          []jaegerUILog       `json:"logs"`
		ProcessID     string              `json:"processID"`
	}
	jaegerUIReference struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	}
	jaegerUITag struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	jaegerUILog struct {
		Timestamp json.RawMessage `json:"timestamp"`
		Fields    []jaegerUITag   `json:"fields"`
	}
	jaegerUIProcess struct {
		ServiceName string `json:"serviceName"`
	}
	jaegerUIError struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
)

func (e *jaegerUIError) Error() string { return jaegerErrorText(e.Msg, e.Code) }

// The tags the Collector's Jaeger translator adds to a span for what OTLP
// holds in fields of their own; the reader takes the kind back and drops
// the others, which the span model does not carry (nor does OTLP hold
// them as attributes).
const (
	jaegerTagSpanKind   = "span.kind"
	jaegerTagStatusCode = "otel.status_code"
	jaegerTagError      = "error"
	jaegerEventField    = "event"
)

// jaegerTranslatorTags are the translator's other tags, dropped.
var jaegerTranslatorTags = map[string]bool{
	"otel.status_description": true,
	"otel.scope.name":         true,
	"otel.scope.version":      true,
	"otel.library.name":       true,
	"otel.library.version":    true,
	"w3c.tracestate":          true,
}

// jaegerKinds are the span.kind tag's values.
var jaegerKinds = map[string]model.Kind{
	"internal": model.KindInternal,
	"server":   model.KindServer,
	"client":   model.KindClient,
	"producer": model.KindProducer,
	"consumer": model.KindConsumer,
}

// JaegerSaved reads answers of Jaeger's APIs saved to a file: /api/traces
// JSON, as the Jaeger UI shows and saves a trace (see jaegerUIAnswer), or
// traces of it alone ({"traceID": ..., "spans": [...], ...}), and
// /api/v3 answers ({"result": ...}, see Jaeger), one value or several. A
// trace an answer reports not found gives no spans and no error. The
// /api/traces JSON does not say whether a span's parent was remote. It
// reads at most limit bytes (DefaultMaxBytes when limit is 0).
func JaegerSaved(r io.Reader, name string, limit int64) ([]model.Span, error) {
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, err
	}
	var spans []model.Span
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		var err error
		if isJaegerV3(raw) {
			spans, err = appendJaegerV3Found(spans, raw)
			return err
		}
		spans, err = appendJaegerUI(spans, raw)
		return err
	})
	return spans, err
}

// isJaegerV3 reports whether raw is an object with result or error: an
// /api/v3 answer.
func isJaegerV3(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	_, _, result := decodedMember(raw, "result", false) // as json.Unmarshal reads them
	_, _, failed := decodedMember(raw, "error", false)
	return result || failed
}

// errNoJaegerUI is what the reader says of JSON that is neither an
// /api/traces answer nor a trace of one.
var errNoJaegerUI = errors.New("not a saved Jaeger answer: want an object with data (/api/traces), traceID and spans (a trace of it) or result (/api/v3)")

func appendJaegerUI(spans []model.Span, raw []byte) ([]model.Span, error) {
	if raw[0] != '{' {
		return spans, errNoJaegerUI
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return spans, err
	}
	if _, isTrace := probe["spans"]; isTrace {
		var tr jaegerUITrace
		if err := json.Unmarshal(raw, &tr); err != nil {
			return spans, err
		}
		return appendJaegerUITrace(spans, &tr, "")
	}
	_, hasData := probe["data"]
	_, hasErrors := probe["errors"]
	if !hasData && !hasErrors {
		return spans, errNoJaegerUI
	}
	var ans jaegerUIAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return spans, err
	}
	for i := range ans.Errors {
		if ans.Errors[i].Code == http.StatusNotFound {
			continue // a trace not found: no spans of it, as /api/v3's 404
		}
		return spans, fmt.Errorf("jaeger reports: %w", &ans.Errors[i])
	}
	for i := range ans.Data {
		var err error
		if spans, err = appendJaegerUITrace(spans, &ans.Data[i], "data["+strconv.Itoa(i)+"]."); err != nil {
			return spans, err
		}
	}
	return spans, nil
}

// appendJaegerUITrace converts the spans of one trace; path names the trace
// in errors.
func appendJaegerUITrace(spans []model.Span, tr *jaegerUITrace, path string) ([]model.Span, error) {
	for i := range tr.Spans {
		span, err := tr.Spans[i].model(tr.Processes)
		if err != nil {
			return spans, prefixError(path+"spans["+strconv.Itoa(i)+"]", err)
		}
		spans = append(spans, span)
	}
	return spans, nil
}

func (s *jaegerUISpan) model(processes map[string]jaegerUIProcess) (model.Span, error) {
	traceID, spanID, err := spanIDs("traceID", s.TraceID, "spanID", s.SpanID)
	if err != nil {
		return model.Span{}, err
	}
	span := model.Span{TraceID: traceID, SpanID: spanID, Name: s.OperationName, Service: processes[s.ProcessID].ServiceName}
	if span.ParentID, err = s.parent(traceID); err != nil {
		return model.Span{}, err
	}
	start, err := jaegerMicros("startTime", s.StartTime)
	if err != nil {
		return model.Span{}, err
	}
	duration, err := jaegerMicros("duration", s.Duration)
	if err != nil {
		return model.Span{}, err
	}
	if duration > math.MaxInt64-start {
		return model.Span{}, fieldErrorf("duration", "ends past the last time: %d", duration)
	}
	span.Start, span.End = time.UnixMicro(start).UTC(), time.UnixMicro(start+duration).UTC()
	if span.Kind, span.Attributes, err = jaegerSpanTags(s.Tags); err != nil {
		return model.Span{}, err
	}
	for i, l := range s.Logs {
		ev, err := l.event(fmt.Sprintf("logs[%d]", i))
		if err != nil {
			return model.Span{}, err
		}
		span.Events = append(span.Events, ev)
	}
	return span, checkSpan(&span, "startTime", "duration")
}

// parent is the span's parent: its first CHILD_OF reference of its own
// trace; "" for none. The Collector's translator writes the parent first,
// and a link as a reference too (FOLLOWS_FROM, or CHILD_OF for an
// OpenTracing child_of link): a CHILD_OF of another trace is such a link.
func (s *jaegerUISpan) parent(traceID string) (string, error) {
	for i, ref := range s.References {
		if t, ok := model.TraceID(ref.TraceID); ref.RefType != "CHILD_OF" || !ok || t != traceID {
			continue
		}
		return parentID(fmt.Sprintf("references[%d].spanID", i), ref.SpanID)
	}
	return "", nil
}

// event converts a log, found at path: its first "event" field names it.
func (l *jaegerUILog) event(path string) (model.Event, error) {
	at, err := jaegerMicros(path+".timestamp", l.Timestamp)
	if err != nil {
		return model.Event{}, err
	}
	ev := model.Event{Time: time.UnixMicro(at).UTC()}
	for j, f := range l.Fields {
		v, err := jaegerValue(f, fmt.Sprintf("%s.fields[%d]", path, j))
		if err != nil {
			return model.Event{}, err
		}
		if f.Key == jaegerEventField && v.Type == model.TypeString && ev.Name == "" {
			ev.Name = v.Str
			continue
		}
		ev.Attributes = append(ev.Attributes, model.Attribute{Key: f.Key, Value: v})
	}
	return ev, nil
}

// parentID normalizes a parent's span id, found at field.
func parentID(field, id string) (string, error) {
	p, ok := model.SpanID(id)
	if !ok || p == "" {
		return "", fieldErrorf(field, "invalid span id %q", id)
	}
	return p, nil
}

// jaegerSpanTags converts a span's tags: the kind from span.kind, the
// translator's other tags dropped (error only beside an ERROR status, the
// translator's own), the rest as attributes in their order.
func jaegerSpanTags(tags []jaegerUITag) (model.Kind, []model.Attribute, error) {
	kind, statusError := model.KindUnspecified, false
	var out []model.Attribute
	for i, tag := range tags {
		v, err := jaegerValue(tag, fmt.Sprintf("tags[%d]", i))
		if err != nil {
			return kind, nil, err
		}
		switch {
		case tag.Key == jaegerTagSpanKind && v.Type == model.TypeString && jaegerKinds[v.Str] != 0:
			kind = jaegerKinds[v.Str]
		case tag.Key == jaegerTagStatusCode:
			statusError = v.Str == "ERROR"
		case jaegerTranslatorTags[tag.Key]:
		default:
			out = append(out, model.Attribute{Key: tag.Key, Value: v})
		}
	}
	if statusError {
		out = withoutTranslatorsError(out)
	}
	return kind, out, nil
}

// withoutTranslatorsError drops the error=true tag the translator adds
// beside an ERROR status.
func withoutTranslatorsError(as []model.Attribute) []model.Attribute {
	for i, a := range as {
		if a.Key == jaegerTagError && a.Value.Type == model.TypeBool && a.Value.Bool {
			return append(as[:i], as[i+1:]...)
		}
	}
	return as
}

// jaegerValue converts a tag or a log field, found at field: its type is
// string, bool, int64, float64 or binary (base64, kept as text).
func jaegerValue(tag jaegerUITag, field string) (model.Value, error) {
	var (
		v   model.Value
		err error
	)
	switch tag.Type {
	case "string", "":
		var s string
		err = json.Unmarshal(tag.Value, &s)
		v = model.String(s)
	case "bool":
		var b bool
		err = json.Unmarshal(tag.Value, &b)
		v = model.Bool(b)
	case "int64":
		var i int64
		i, err = unmarshalInt(tag.Value)
		v = model.Int(i)
	case "float64":
		var f float64
		err = json.Unmarshal(tag.Value, &f)
		v = model.Float(f)
	default: // binary: base64 in a JSON string, kept as that text
		text := string(tag.Value)
		var s string
		if json.Unmarshal(tag.Value, &s) == nil {
			text = s
		}
		v = model.Other(text)
	}
	if err != nil {
		return model.Value{}, fieldErrorf(fmt.Sprintf("%s (%q)", field, tag.Key), "%v", err)
	}
	return v, nil
}

// jaegerMicros decodes a time or a duration in microseconds, found at
// field: a whole number, not negative.
func jaegerMicros(field string, raw json.RawMessage) (int64, error) {
	if raw == nil {
		return 0, fieldErrorf(field, "missing")
	}
	n, err := unmarshalInt(raw)
	switch {
	case err != nil:
		return 0, fieldErrorf(field, "%v", err)
	case n < 0:
		return 0, fieldErrorf(field, "negative: %d", n)
	}
	return n, nil
}
