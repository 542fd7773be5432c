package read

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// The Jaeger query service's v1 HTTP API JSON (/api/traces), as its UI
// model encodes it: times and durations in microseconds, tags typed
// "string", "bool", "int64", "float64" or "binary", the span kind in the
// span.kind tag and the parent in a CHILD_OF reference.
type (
	jaegerResponse struct {
		Data   []jaegerTrace `json:"data"`
		Errors []jaegerError `json:"errors"`
	}
	jaegerError struct {
		Code    int    `json:"code"`
		Msg     string `json:"msg"`
		TraceID string `json:"traceID"`
	}
	jaegerTrace struct {
		TraceID string       `json:"traceID"`
		Spans   []jaegerSpan `json:"spans"`
	}
	jaegerSpan struct {
		TraceID       string            `json:"traceID"`
		SpanID        string            `json:"spanID"`
		ParentSpanID  string            `json:"parentSpanID"` // deprecated by references
		OperationName string            `json:"operationName"`
		References    []jaegerReference `json:"references"`
		StartTime     int64             `json:"startTime"`
		Duration      int64             `json:"duration"`
		Tags          []jaegerTag       `json:"tags"`
	}
	jaegerReference struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	}
	jaegerTag struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
)

// jaegerKindTag is the tag in which Jaeger keeps the span kind. It is a
// field of Jaeger's format, not a span attribute, so the reader removes it.
const jaegerKindTag = "span.kind"

func (e jaegerError) String() string {
	s := e.Msg
	if e.Code != 0 {
		s = fmt.Sprintf("%s (code %d)", s, e.Code)
	}
	if e.TraceID != "" {
		s += " for trace " + e.TraceID
	}
	return s
}

// Jaeger reads one response of the Jaeger query API (/api/traces or
// /api/traces/{id}). Errors the API reports next to data are returned as
// warnings; errors without any data are an error.
func Jaeger(r io.Reader, name string) (spans []model.Span, warnings []string, err error) {
	data, err := readAll(r, name)
	if err != nil {
		return nil, nil, err
	}
	traces := 0
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		var resp jaegerResponse
		if raw[0] != '{' {
			return errors.New("not a Jaeger API response: want a JSON object with data")
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return err
		}
		for _, e := range resp.Errors {
			warnings = append(warnings, e.String())
		}
		traces += len(resp.Data)
		for i, t := range resp.Data {
			for j := range t.Spans {
				span, err := t.Spans[j].model()
				if err != nil {
					return &fieldError{path: fmt.Sprintf("data[%d].spans[%d]", i, j), err: err}
				}
				spans = append(spans, span)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if traces == 0 && len(warnings) > 0 {
		return nil, nil, fmt.Errorf("%s: %s", name, strings.Join(warnings, "; "))
	}
	return spans, warnings, nil
}

func (s *jaegerSpan) model() (model.Span, error) {
	traceID, spanID, err := spanIDs("traceID", s.TraceID, "spanID", s.SpanID)
	if err != nil {
		return model.Span{}, err
	}
	parent := s.ParentSpanID
	for _, ref := range s.References {
		if ref.RefType == "CHILD_OF" {
			parent = ref.SpanID
			break
		}
	}
	parentID, ok := model.SpanID(parent)
	if !ok {
		return model.Span{}, fmt.Errorf("parent span id %q is not a hex span id", parent)
	}
	start := time.UnixMicro(s.StartTime).UTC()
	span := model.Span{
		TraceID: traceID, SpanID: spanID, ParentID: parentID,
		Name:  s.OperationName,
		Start: start,
		End:   start.Add(time.Duration(s.Duration) * time.Microsecond),
	}
	for i, tag := range s.Tags {
		v, err := tag.model()
		if err != nil {
			return model.Span{}, fmt.Errorf("tags[%d] (%s): %w", i, tag.Key, err)
		}
		if tag.Key == jaegerKindTag && v.Type == model.TypeString {
			if k, ok := model.KindFromName(v.Str); ok {
				span.Kind = k
				continue
			}
		}
		span.Attributes = append(span.Attributes, model.Attribute{Key: tag.Key, Value: v})
	}
	return span, nil
}

func (t *jaegerTag) model() (model.Value, error) {
	typ := t.Type
	if typ == "" { // untyped: infer from the JSON value
		switch {
		case len(t.Value) == 0:
			return model.Other(""), nil
		case t.Value[0] == '"':
			typ = "string"
		case t.Value[0] == 't' || t.Value[0] == 'f':
			typ = "bool"
		case strings.ContainsAny(string(t.Value), ".eE"):
			typ = "float64"
		default:
			typ = "int64"
		}
	}
	switch typ {
	case "string":
		var s string
		err := json.Unmarshal(t.Value, &s)
		return model.String(s), err
	case "bool":
		var b bool
		err := json.Unmarshal(t.Value, &b)
		return model.Bool(b), err
	case "int64":
		i, err := unmarshalInt(t.Value)
		return model.Int(i), err
	case "float64":
		var f float64
		err := json.Unmarshal(t.Value, &f)
		return model.Float(f), err
	default:
		return model.Other(string(t.Value)), nil
	}
}
