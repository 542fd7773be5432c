// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// stdoutSpan is the part of a tracetest.SpanStub, as the stdouttrace
// exporter encodes it, that the inspector needs.
type stdoutSpan struct {
	Name        string
	SpanContext *stdoutSpanContext
	Parent      stdoutSpanContext
	SpanKind    int
	StartTime   time.Time
	EndTime     time.Time
	Attributes  []stdoutAttribute
	Events      []stdoutEvent
	// Resource is the resource's attributes, service.name among them.
	Resource []stdoutAttribute
}

// stdoutEvent is an sdktrace.Event as encoding/json writes it.
type stdoutEvent struct {
	Name       string
	Attributes []stdoutAttribute
	Time       time.Time
}

type stdoutSpanContext struct {
	TraceID string
	SpanID  string
	Remote  bool
}

type stdoutAttribute struct {
	Key   string
	Value struct {
		Type  string
		Value json.RawMessage
	}
}

// Stdout reads the stream of span objects that
// go.opentelemetry.io/otel/exporters/stdout/stdouttrace writes, pretty-printed
// or not. A top-level array of span objects is accepted too. It reads at
// most limit bytes (DefaultMaxBytes when limit is 0).
func Stdout(r io.Reader, name string, limit int64) ([]model.Span, error) {
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, err
	}
	var spans []model.Span
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		var batch []stdoutSpan
		isArray := raw[0] == '['
		if isArray {
			if err := json.Unmarshal(raw, &batch); err != nil {
				return err
			}
		} else {
			var s stdoutSpan
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			batch = []stdoutSpan{s}
		}
		for i := range batch {
			span, err := batch[i].model()
			if err != nil {
				if isArray {
					return &fieldError{path: "[" + strconv.Itoa(i) + "]", err: err}
				}
				return err
			}
			spans = append(spans, span)
		}
		return nil
	})
	return spans, err
}

func (s *stdoutSpan) model() (model.Span, error) {
	if s.SpanContext == nil {
		return model.Span{}, fmt.Errorf("not a stdouttrace span: no SpanContext (is this OTLP JSON? give -format otlp)")
	}
	traceID, spanID, err := spanIDs("SpanContext.TraceID", s.SpanContext.TraceID, "SpanContext.SpanID", s.SpanContext.SpanID)
	if err != nil {
		return model.Span{}, err
	}
	parentID, ok := model.SpanID(s.Parent.SpanID)
	if !ok {
		return model.Span{}, fieldErrorf("Parent.SpanID", "invalid span id %q", s.Parent.SpanID)
	}
	span := model.Span{
		TraceID:  traceID,
		SpanID:   spanID,
		ParentID: parentID,
		// The SDK's SpanContext JSON says whether the parent is remote.
		ParentRemote: parentID != "" && s.Parent.Remote,
		Name:         s.Name,
		Kind:         model.Kind(s.SpanKind),
		Start:        s.StartTime,
		End:          s.EndTime,
	}
	if span.Attributes, err = stdoutAttributes(s.Attributes, "Attributes"); err != nil {
		return model.Span{}, err
	}
	for _, a := range s.Resource {
		if a.Key == serviceNameKey && a.Value.Type == "STRING" {
			if err := json.Unmarshal(a.Value.Value, &span.Service); err != nil {
				return model.Span{}, fieldErrorf("Resource ("+serviceNameKey+")", "%v", err)
			}
		}
	}
	for i, e := range s.Events {
		kvs, err := stdoutAttributes(e.Attributes, fmt.Sprintf("Events[%d].Attributes", i))
		if err != nil {
			return model.Span{}, err
		}
		span.Events = append(span.Events, model.Event{Name: e.Name, Time: e.Time, Attributes: kvs})
	}
	return span, checkSpan(&span, "StartTime", "EndTime")
}

// stdoutAttributes converts the attributes of a span or an event, found
// at field.
func stdoutAttributes(as []stdoutAttribute, field string) ([]model.Attribute, error) {
	var out []model.Attribute
	for i, a := range as {
		v, err := stdoutValue(a.Value.Type, a.Value.Value)
		if err != nil {
			return nil, fieldErrorf(fmt.Sprintf("%s[%d] (%q)", field, i, a.Key), "%v", err)
		}
		out = append(out, model.Attribute{Key: a.Key, Value: v})
	}
	return out, nil
}

// stdoutValue converts an attribute.Value as its MarshalJSON writes it:
// {"Type": "INT64", "Value": 1}.
func stdoutValue(typ string, raw json.RawMessage) (model.Value, error) {
	switch typ {
	case "STRING":
		var s string
		err := json.Unmarshal(raw, &s)
		return model.String(s), err
	case "INT64":
		i, err := unmarshalInt(raw)
		return model.Int(i), err
	case "FLOAT64":
		var f float64
		err := json.Unmarshal(raw, &f)
		return model.Float(f), err
	case "BOOL":
		var b bool
		err := json.Unmarshal(raw, &b)
		return model.Bool(b), err
	default:
		return model.Other(string(raw)), nil
	}
}
