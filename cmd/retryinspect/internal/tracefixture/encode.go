package tracefixture

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// WriteOTLP writes the spans of roots as OTLP JSON the way the Collector's
// file exporter does: one ExportTraceServiceRequest per line (here one per
// trace), hex ids, 64-bit integers as decimal strings, kind as an integer.
func WriteOTLP(w io.Writer, roots ...Span) error {
	enc := json.NewEncoder(w)
	for _, spans := range byTrace(Record(roots...)) {
		var out []map[string]any
		for _, s := range spans {
			span := map[string]any{
				"traceId":           s.SpanContext().TraceID().String(),
				"spanId":            s.SpanContext().SpanID().String(),
				"name":              s.Name(),
				"kind":              int(s.SpanKind()),
				"startTimeUnixNano": strconv.FormatInt(s.StartTime().UnixNano(), 10),
				"endTimeUnixNano":   strconv.FormatInt(s.EndTime().UnixNano(), 10),
				"attributes":        otlpAttributes(s.Attributes()),
				"status":            map[string]any{},
			}
			if s.Parent().SpanID().IsValid() {
				span["parentSpanId"] = s.Parent().SpanID().String()
			}
			out = append(out, span)
		}
		req := map[string]any{"resourceSpans": []any{map[string]any{
			"resource": map[string]any{"attributes": otlpAttributes(spans[0].Resource().Attributes())},
			"scopeSpans": []any{map[string]any{
				"scope": map[string]any{"name": spans[0].InstrumentationScope().Name},
				"spans": out,
			}},
		}}}
		if err := enc.Encode(req); err != nil {
			return err
		}
	}
	return nil
}

func otlpAttributes(kvs []attribute.KeyValue) []any {
	out := []any{}
	for _, kv := range kvs {
		var v map[string]any
		switch kv.Value.Type() {
		case attribute.BOOL:
			v = map[string]any{"boolValue": kv.Value.AsBool()}
		case attribute.INT64:
			v = map[string]any{"intValue": strconv.FormatInt(kv.Value.AsInt64(), 10)}
		case attribute.FLOAT64:
			v = map[string]any{"doubleValue": kv.Value.AsFloat64()}
		default:
			v = map[string]any{"stringValue": kv.Value.Emit()}
		}
		out = append(out, map[string]any{"key": string(kv.Key), "value": v})
	}
	return out
}

// WriteJaeger writes the spans of roots as one answer of the Jaeger query
// API (/api/traces): trace ids whose high half is zero printed with 16
// digits as Jaeger does, microsecond times, typed tags, the kind in the
// span.kind tag and the parent in a CHILD_OF reference.
func WriteJaeger(w io.Writer, roots ...Span) error {
	var traces []any
	for _, spans := range byTrace(Record(roots...)) {
		var out []any
		for _, s := range spans {
			refs := []any{}
			if s.Parent().SpanID().IsValid() {
				refs = append(refs, map[string]any{
					"refType": "CHILD_OF",
					"traceID": jaegerTraceID(s.SpanContext().TraceID()),
					"spanID":  s.Parent().SpanID().String(),
				})
			}
			tags := jaegerTags(s.Attributes())
			if k := s.SpanKind(); k != trace.SpanKindUnspecified {
				tags = append(tags, map[string]any{"key": "span.kind", "type": "string", "value": k.String()})
			}
			tags = append(tags, map[string]any{"key": "otel.scope.name", "type": "string", "value": s.InstrumentationScope().Name})
			out = append(out, map[string]any{
				"traceID":       jaegerTraceID(s.SpanContext().TraceID()),
				"spanID":        s.SpanContext().SpanID().String(),
				"operationName": s.Name(),
				"references":    refs,
				"startTime":     s.StartTime().UnixMicro(),
				"duration":      s.EndTime().Sub(s.StartTime()).Microseconds(),
				"tags":          tags,
				"logs":          []any{},
				"processID":     "p1",
				"warnings":      nil,
			})
		}
		traces = append(traces, map[string]any{
			"traceID":   jaegerTraceID(spans[0].SpanContext().TraceID()),
			"spans":     out,
			"processes": map[string]any{"p1": map[string]any{"serviceName": ServiceName, "tags": []any{}}},
			"warnings":  nil,
		})
	}
	return json.NewEncoder(w).Encode(map[string]any{
		"data": traces, "total": 0, "limit": 0, "offset": 0, "errors": nil,
	})
}

func jaegerTraceID(id trace.TraceID) string {
	s := id.String()
	if high := s[:16]; strings.Trim(high, "0") == "" {
		return s[16:]
	}
	return s
}

func jaegerTags(kvs []attribute.KeyValue) []any {
	out := []any{}
	for _, kv := range kvs {
		tag := map[string]any{"key": string(kv.Key)}
		switch kv.Value.Type() {
		case attribute.BOOL:
			tag["type"], tag["value"] = "bool", kv.Value.AsBool()
		case attribute.INT64:
			tag["type"], tag["value"] = "int64", kv.Value.AsInt64()
		case attribute.FLOAT64:
			tag["type"], tag["value"] = "float64", kv.Value.AsFloat64()
		default:
			tag["type"], tag["value"] = "string", kv.Value.Emit()
		}
		out = append(out, tag)
	}
	return out
}

// byTrace splits spans by trace, keeping the order of first appearance.
func byTrace(spans []sdktrace.ReadOnlySpan) [][]sdktrace.ReadOnlySpan {
	var order []trace.TraceID
	groups := map[trace.TraceID][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		id := s.SpanContext().TraceID()
		if groups[id] == nil {
			order = append(order, id)
		}
		groups[id] = append(groups[id], s)
	}
	out := make([][]sdktrace.ReadOnlySpan, len(order))
	for i, id := range order {
		out[i] = groups[id]
	}
	return out
}
