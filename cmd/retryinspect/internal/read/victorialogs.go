// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// How VictoriaLogs stores an OTLP log record (its /insert/opentelemetry/v1/logs
// handler) and returns it from /select/logsql/query, one JSON object per
// line whose values are all strings. So does VictoriaLogs v1.52.1, the
// stack's: the end-to-end test reads the demo's records, sent through the
// Collector, with retryinspect -victorialogs.
//
//   - the resource attributes, as fields of their own name (and, by
//     default, the stream fields, listed in _stream as {k="v",...}, with
//     event_name; _stream_id names the stream);
//   - scope.name, scope.version and scope.attributes.* for the scope;
//   - severity_number and severity_text (severity in older releases);
//   - the body in _msg (a map body is flattened instead);
//   - every attribute, as a field of its own name, its value written as
//     text whatever its type (an int 3 is "3", a bool "true"), a map
//     flattened with dotted names;
//   - trace_id and span_id in hex, when the record has them;
//   - event_name, the record's event name, when it has one;
//   - _time, the record's time (or its observed time) in RFC 3339.
//
// The reader keeps the retry contract's attributes and gives the integer
// and boolean ones of package attrs their type back; every other field is
// a string, as stored. A type mismatch the emitter made (a float attempt
// number) cannot be seen here: read the OTLP logs or the spans for that.
const (
	vlTime      = "_time"
	vlMsg       = "_msg"
	vlStream    = "_stream"
	vlEventName = "event_name"
	vlTraceID   = "trace_id"
	vlSpanID    = "span_id"
)

// vlDropped are the fields that describe the record or its scope, not
// the event: they are not attributes of the attempt or operation.
var vlDropped = []string{"severity", "severity_number", "severity_text", "scope.name", "scope.version"}

// vlTyped are the contract's attributes that are not strings.
var vlTyped = func() map[string]model.Type {
	m := map[string]model.Type{}
	for _, k := range []attribute.Key{
		attrs.AttemptKey, attrs.AttemptsKey, attrs.ElapsedMsKey, attrs.RemainingMsKey, attrs.RetryAfterMsKey,
		attrs.BackoffMsKey, attrs.DeadlineMsKey, attrs.LegacyBudgetMsKey, attrs.RedirectsKey, attrs.RepeatKey,
		attrs.AbandonedAttemptKey, attrs.OperationDurationMsKey, attrs.HTTPResponseStatusCodeKey,
		attrs.HTTPRequestResendCountKey, attrs.ServerPortKey, attrs.WireWritesKey, attrs.EvidenceCodeKey,
		attrs.HedgeOfKey, attrs.HedgedAfterMsKey,
	} {
		m[string(k)] = model.TypeInt
	}
	m[string(attrs.IdempotencyContractKey)] = model.TypeBool
	m[string(attrs.IdempotencyReplayedKey)] = model.TypeBool
	return m
}()

// VictoriaLogs reads the answer of VictoriaLogs' /select/logsql/query: one
// JSON object per line, a stored log record each (see above). Records come
// back as spans with Log set (see model.Span). It reads at most limit bytes
// (DefaultMaxBytes when limit is 0).
func VictoriaLogs(r io.Reader, name string, limit int64) ([]model.Span, error) {
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, err
	}
	var spans []model.Span
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		if raw[0] != '{' {
			return errors.New("not a VictoriaLogs log entry: want a JSON object per line")
		}
		span, err := vlRecord(raw)
		if err != nil {
			return err
		}
		spans = append(spans, span)
		return nil
	})
	return spans, err
}

// vlRecord converts one log entry.
func vlRecord(raw []byte) (model.Span, error) {
	fields, err := vlFields(raw)
	if err != nil {
		return model.Span{}, err
	}
	if _, ok := fields[vlTime]; !ok {
		if _, ok := fields["resourceLogs"]; ok {
			return model.Span{}, errors.New("not a VictoriaLogs log entry: no _time (is this OTLP JSON? give it as a file)")
		}
		return model.Span{}, vlFieldErrorf(vlTime, "missing: not a VictoriaLogs log entry")
	}
	var r logRecord
	if s := fields[vlTime]; s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return model.Span{}, vlFieldErrorf(vlTime, "invalid time %s", strconv.Quote(cut(s)))
		}
		r.time = t.UTC()
	}
	if s, ok := fields[vlTraceID]; ok {
		if r.traceID, ok = model.TraceID(s); !ok {
			return model.Span{}, vlFieldErrorf(vlTraceID, "invalid trace id %s", strconv.Quote(cut(s)))
		}
	}
	if s, ok := fields[vlSpanID]; ok {
		if r.spanID, ok = model.SpanID(s); !ok {
			return model.Span{}, vlFieldErrorf(vlSpanID, "invalid span id %s", strconv.Quote(cut(s)))
		}
	}
	r.event = fields[vlEventName]
	if r.event == "" {
		r.event = fields[eventNameKey]
	}
	drop := streamKeys(fields[vlStream])
	keys := make([]string, 0, len(fields))
	for k := range fields {
		switch {
		case strings.HasPrefix(k, "_"), k == vlEventName, k == eventNameKey, k == vlTraceID, k == vlSpanID,
			slices.Contains(vlDropped, k), strings.HasPrefix(k, "scope.attributes."), drop[k]:
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.attrs = make([]model.Attribute, 0, len(keys))
	for _, k := range keys {
		r.attrs = append(r.attrs, model.Attribute{Key: k, Value: vlValue(k, fields[k])})
	}
	s := r.span()
	return s, checkRecord(&s, vlTime)
}

// vlFieldErrorf is fieldErrorf for a field vlFields read: a repeated
// key's first value, spelled exactly.
func vlFieldErrorf(key, format string, args ...any) error {
	return &fieldError{path: key, err: fmt.Errorf(format, args...), firstKey: true}
}

// vlFields decodes one log entry's fields. A value that is not a string
// (VictoriaLogs writes none) is kept as its JSON text; a key given twice
// keeps its first value.
func vlFields(raw []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, seen := fields[key]; seen {
			continue
		}
		var s string
		if len(v) > 0 && v[0] == '"' {
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
		} else {
			s = string(v)
		}
		fields[key] = s
	}
	return fields, nil
}

// vlValue gives a stored text its contract type back: an integer or a
// boolean attribute of package attrs whose text is one. Anything else
// stays a string, which the inspector reports where the contract wants
// another type.
func vlValue(key, text string) model.Value {
	switch vlTyped[key] {
	case model.TypeInt:
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return model.Int(i)
		}
	case model.TypeBool:
		if b, err := strconv.ParseBool(text); err == nil && (text == "true" || text == "false") {
			return model.Bool(b)
		}
	}
	return model.String(text)
}

// streamKeys reads the field names of a _stream value, {k="v",k2="v2"}:
// the resource attributes when VictoriaLogs kept its default stream
// fields. They describe the service, not the event. A value it cannot
// read gives none.
func streamKeys(stream string) map[string]bool {
	s, ok := strings.CutPrefix(stream, "{")
	if !ok {
		return nil
	}
	keys := map[string]bool{}
	for s != "" && s != "}" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return keys
		}
		keys[s[:eq]] = true
		// The value is a quoted string with backslash escapes.
		i := eq + 2
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return keys
		}
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return keys
}

// cut shortens a value quoted in an error message.
func cut(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "..."
	}
	return s
}
