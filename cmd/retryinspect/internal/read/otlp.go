package read

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// OTLP JSON (the OTLP/HTTP JSON encoding of ExportTraceServiceRequest): ids
// are hex strings, 64-bit integers are decimal strings (numbers accepted),
// enums are integers (names accepted).
type (
	otlpRequest struct {
		ResourceSpans *[]otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
		// Deprecated name of scopeSpans, still found in old files.
		InstrumentationLibrarySpans []otlpScopeSpans `json:"instrumentationLibrarySpans"`
	}
	otlpScopeSpans struct {
		Spans []otlpSpan `json:"spans"`
	}
	otlpSpan struct {
		TraceID           string          `json:"traceId"`
		SpanID            string          `json:"spanId"`
		ParentSpanID      string          `json:"parentSpanId"`
		Name              string          `json:"name"`
		Kind              json.RawMessage `json:"kind"`
		StartTimeUnixNano json.RawMessage `json:"startTimeUnixNano"`
		EndTimeUnixNano   json.RawMessage `json:"endTimeUnixNano"`
		Attributes        []otlpKeyValue  `json:"attributes"`
	}
	otlpKeyValue struct {
		Key   string       `json:"key"`
		Value otlpAnyValue `json:"value"`
	}
	otlpAnyValue struct {
		StringValue *string         `json:"stringValue"`
		BoolValue   *bool           `json:"boolValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
		ArrayValue  json.RawMessage `json:"arrayValue"`
		KvlistValue json.RawMessage `json:"kvlistValue"`
		BytesValue  json.RawMessage `json:"bytesValue"`
	}
)

// OTLP reads OTLP JSON as the Collector's file exporter writes it: one
// ExportTraceServiceRequest object per line (a single pretty-printed object
// is accepted too).
func OTLP(r io.Reader, name string) ([]model.Span, error) {
	data, err := readAll(r, name)
	if err != nil {
		return nil, err
	}
	var spans []model.Span
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		var req otlpRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return err
		}
		if req.ResourceSpans == nil {
			return errors.New("not an OTLP trace request: no resourceSpans (is this stdouttrace output? use --stdout)")
		}
		for i, rs := range *req.ResourceSpans {
			scopes := append(rs.ScopeSpans, rs.InstrumentationLibrarySpans...)
			for j, ss := range scopes {
				for k := range ss.Spans {
					span, err := ss.Spans[k].model()
					if err != nil {
						return &fieldError{
							path: fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", i, j, k),
							err:  err,
						}
					}
					spans = append(spans, span)
				}
			}
		}
		return nil
	})
	return spans, err
}

func (s *otlpSpan) model() (model.Span, error) {
	traceID, spanID, err := spanIDs("traceId", s.TraceID, "spanId", s.SpanID)
	if err != nil {
		return model.Span{}, err
	}
	parentID, ok := model.SpanID(s.ParentSpanID)
	if !ok {
		return model.Span{}, fmt.Errorf("parentSpanId %q is not a hex span id", s.ParentSpanID)
	}
	kind, err := otlpKind(s.Kind)
	if err != nil {
		return model.Span{}, fmt.Errorf("kind: %w", err)
	}
	start, err := otlpTime(s.StartTimeUnixNano)
	if err != nil {
		return model.Span{}, fmt.Errorf("startTimeUnixNano: %w", err)
	}
	end, err := otlpTime(s.EndTimeUnixNano)
	if err != nil {
		return model.Span{}, fmt.Errorf("endTimeUnixNano: %w", err)
	}
	span := model.Span{
		TraceID: traceID, SpanID: spanID, ParentID: parentID,
		Name: s.Name, Kind: kind, Start: start, End: end,
	}
	for i, a := range s.Attributes {
		v, err := a.Value.model()
		if err != nil {
			return model.Span{}, fmt.Errorf("attributes[%d] (%s): %w", i, a.Key, err)
		}
		span.Attributes = append(span.Attributes, model.Attribute{Key: a.Key, Value: v})
	}
	return span, nil
}

func (v *otlpAnyValue) model() (model.Value, error) {
	switch {
	case v.StringValue != nil:
		return model.String(*v.StringValue), nil
	case v.BoolValue != nil:
		return model.Bool(*v.BoolValue), nil
	case v.IntValue != nil:
		i, err := unmarshalInt(v.IntValue)
		if err != nil {
			return model.Value{}, fmt.Errorf("intValue: %w", err)
		}
		return model.Int(i), nil
	case v.DoubleValue != nil:
		f, err := otlpDouble(v.DoubleValue)
		if err != nil {
			return model.Value{}, fmt.Errorf("doubleValue: %w", err)
		}
		return model.Float(f), nil
	case v.ArrayValue != nil:
		return model.Other(string(v.ArrayValue)), nil
	case v.KvlistValue != nil:
		return model.Other(string(v.KvlistValue)), nil
	case v.BytesValue != nil:
		return model.Other(string(v.BytesValue)), nil
	default:
		return model.Other(""), nil
	}
}

// otlpDouble accepts a JSON number or the protobuf JSON strings "NaN",
// "Infinity" and "-Infinity".
func otlpDouble(raw json.RawMessage) (float64, error) {
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	} else {
		s = string(raw)
	}
	return strconv.ParseFloat(s, 64)
}

func otlpKind(raw json.RawMessage) (model.Kind, error) {
	if raw == nil {
		return model.KindUnspecified, nil
	}
	if raw[0] == '"' {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return 0, err
		}
		if k, ok := model.KindFromName(strings.TrimPrefix(name, "SPAN_KIND_")); ok {
			return k, nil
		}
		return 0, fmt.Errorf("unknown span kind %q", name)
	}
	i, err := unmarshalInt(raw)
	return model.Kind(i), err
}

func otlpTime(raw json.RawMessage) (time.Time, error) {
	if raw == nil {
		return time.Time{}, nil
	}
	ns, err := unmarshalInt(raw)
	if err != nil || ns == 0 {
		return time.Time{}, err
	}
	return time.Unix(0, ns).UTC(), nil
}
