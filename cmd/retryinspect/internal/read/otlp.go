// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// serviceNameKey is the resource attribute that names the service which
// recorded a span (model.Span.Service).
var serviceNameKey = string(semconv.ServiceNameKey)

// OTLP reads OTLP JSON as the Collector's file exporter writes it: one
// ExportTraceServiceRequest object per line (a single pretty-printed object
// is accepted too), or one ExportLogsServiceRequest per line, whose
// records come back as spans with Log set (see model.Span). One input
// holds traces or logs, not both: the two read the same operations. It
// reads at most limit bytes (DefaultMaxBytes when limit is 0).
func OTLP(r io.Reader, name string, limit int64) ([]model.Span, error) {
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, err
	}
	var (
		spans             []model.Span
		sawSpans, sawLogs bool
	)
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		more, err := appendOTLP(spans, raw, "")
		if errors.Is(err, errNoResourceSpans) {
			if !resourceLogsKey.in(raw) {
				return errNoOTLP
			}
			if sawSpans {
				return errMixedOTLP
			}
			sawLogs = true
			spans, err = appendOTLPLogs(spans, raw)
			return err
		}
		if sawLogs || resourceLogsKey.in(raw) {
			return errMixedOTLP
		}
		sawSpans, spans = true, more
		return err
	})
	return spans, err
}

// errMixedOTLP refuses an input holding both traces and logs: read one of
// them (both describe the same attempts).
var errMixedOTLP = errors.New("this input holds both traces (resourceSpans) and logs (resourceLogs): give them as separate files")

// errNoResourceSpans is what a JSON object without resourceSpans (a
// stdouttrace span, a Jaeger v1 answer, anything else) gets.
var errNoResourceSpans = errors.New("not an OTLP trace request: no resourceSpans (is this stdouttrace output? give -format stdouttrace)")

// errNoOTLP is what the OTLP reader says of a JSON object that is neither an OTLP
// trace nor an OTLP logs request.
var errNoOTLP = errors.New("not an OTLP trace request: no resourceSpans, nor an OTLP logs request: no resourceLogs (is this stdouttrace output? give -format stdouttrace)")

// appendOTLP decodes one OTLP JSON TracesData (ExportTraceServiceRequest)
// object with the Collector's pdata decoder, the one place where this
// command reads OTLP JSON, and appends its spans, without the attributes
// whose key starts with drop (when not empty): a backend's annotations. An
// error inside a span is an *offsetError at that span.
func appendOTLP(spans []model.Span, raw []byte, drop string) ([]model.Span, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return spans, errors.New("not an OTLP trace request: want a JSON object with resourceSpans")
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		return spans, locatePdataError(raw, err)
	}
	if td.ResourceSpans().Len() == 0 {
		if !otlpLevels[0].key.in(raw) {
			return spans, errNoResourceSpans
		}
	}
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		service := ""
		if v, ok := rss.At(i).Resource().Attributes().Get(serviceNameKey); ok && v.Type() == pcommon.ValueTypeStr {
			service = v.Str()
		}
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j).Spans()
			for k := range ss.Len() {
				span, err := fromPdata(ss.At(k), drop)
				if err != nil {
					return spans, locateSpan(raw, [3]int{i, j, k}, err)
				}
				span.Service = service
				spans = append(spans, span)
			}
		}
	}
	return spans, nil
}

// otlpParentIsRemote are the bits of an OTLP span's flags that say its
// parent is remote: SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE and
// SPAN_FLAGS_CONTEXT_IS_REMOTE.
const otlpParentIsRemote = 0x100 | 0x200

// fromPdata converts one pdata span. pdata has checked the id lengths and
// the JSON types; empty ids remain to be refused.
func fromPdata(s ptrace.Span, drop string) (model.Span, error) {
	if s.TraceID().IsEmpty() {
		return model.Span{}, fieldErrorf("traceId", "missing or all-zero trace id")
	}
	if s.SpanID().IsEmpty() {
		return model.Span{}, fieldErrorf("spanId", "missing or all-zero span id")
	}
	tid, sid := s.TraceID(), s.SpanID()
	span := model.Span{
		TraceID: hex.EncodeToString(tid[:]),
		SpanID:  hex.EncodeToString(sid[:]),
		Name:    s.Name(),
		Kind:    model.Kind(s.Kind()),
		Start:   unixNano(uint64(s.StartTimestamp())),
		End:     unixNano(uint64(s.EndTimestamp())),
	}
	if p := s.ParentSpanID(); !p.IsEmpty() {
		span.ParentID = hex.EncodeToString(p[:])
		span.ParentRemote = s.Flags()&otlpParentIsRemote == otlpParentIsRemote
	}
	span.Attributes = pdataAttributes(s.Attributes(), drop)
	for _, e := range s.Events().All() {
		span.Events = append(span.Events, model.Event{Name: e.Name(), Time: unixNano(uint64(e.Timestamp())),
			Attributes: pdataAttributes(e.Attributes(), drop)})
	}
	return span, checkSpan(&span, "startTimeUnixNano", "endTimeUnixNano")
}

// pdataAttributes converts the attributes of a span or an event, without
// those whose key starts with drop (when not empty).
func pdataAttributes(m pcommon.Map, drop string) []model.Attribute {
	if m.Len() == 0 {
		return nil
	}
	out := make([]model.Attribute, 0, m.Len())
	for k, v := range m.All() {
		if drop != "" && strings.HasPrefix(k, drop) {
			continue
		}
		out = append(out, model.Attribute{Key: k, Value: pdataValue(v)})
	}
	return out
}

// unixNano converts OTLP's unsigned nanoseconds since the epoch without
// wrapping: every uint64 value is a time between 1970 and 2554. Zero means
// unset.
func unixNano(ns uint64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(int64(ns/1e9), int64(ns%1e9)).UTC()
}

func pdataValue(v pcommon.Value) model.Value {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return model.String(v.Str())
	case pcommon.ValueTypeInt:
		return model.Int(v.Int())
	case pcommon.ValueTypeDouble:
		return model.Float(v.Double())
	case pcommon.ValueTypeBool:
		return model.Bool(v.Bool())
	case pcommon.ValueTypeEmpty:
		return model.Other("")
	default: // maps, slices, bytes: outside the retry contract
		return model.Other(v.AsString())
	}
}

// pdataMessage keeps the reason of a pdata decoding error and drops the
// excerpt of the input it quotes, which may hold anything, secrets
// included; the position replaces it.
func pdataMessage(err error) error {
	msg, _, _ := strings.Cut(err.Error(), ", error found in #")
	return errors.New(msg)
}

// The nesting of OTLP JSON down to a span, and how to decode a piece of
// each level alone: pdata must see a whole TracesData.
var otlpLevels = []struct {
	key          otlpKey // the array holding this level's objects
	before, tail string  // wraps one object of the level into a TracesData
}{
	{otlpKey{json: "resourceSpans", proto: "resource_spans"}, `{"resourceSpans":[`, `]}`},
	{otlpKey{"scopeSpans", "scope_spans", &otlpKey{json: "deprecatedScopeSpans", proto: "deprecated_scope_spans"}},
		`{"resourceSpans":[{"scopeSpans":[`, `]}]}`},
	{otlpKey{json: "spans", proto: "spans"}, `{"resourceSpans":[{"scopeSpans":[{"spans":[`, `]}]}]}`},
}

// otlpKey is a key of OTLP JSON's nesting as pdata reads it: by its JSON
// name or its proto field name (resourceSpans or resource_spans), spelled
// exactly; both in one object are one array, the second's elements after
// the first's. A key that replaced a deprecated one (scopeSpans,
// deprecatedScopeSpans) reads the deprecated one's elements when it has
// none (pdata's otlp.MigrateTraces and MigrateLogs).
type otlpKey struct {
	json, proto string
	deprecated  *otlpKey
}

// is reports whether k is spelled s.
func (k otlpKey) is(s string) bool { return s == k.json || s == k.proto }

// names reports whether s is k or the deprecated key k replaced.
func (k otlpKey) names(s string) bool {
	return k.is(s) || k.deprecated != nil && k.deprecated.is(s)
}

// in reports whether the JSON object obj has k.
func (k otlpKey) in(obj []byte) bool {
	found := false
	walkFields(obj, func(s string, _ int, _ []byte) bool {
		found = k.is(s)
		return !found
	})
	return found
}

// decodeAlone decodes obj, one object of the given level, as the only
// content of a TracesData.
func decodeAlone(level int, obj []byte) error {
	l := otlpLevels[level]
	doc := make([]byte, 0, len(l.before)+len(obj)+len(l.tail))
	doc = append(append(append(doc, l.before...), obj...), l.tail...)
	_, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(doc)
	return err
}

// locatePdataError finds what pdata refused, by decoding the resource
// spans of raw one by one, then the fields of the one that fails, and so
// down to the field of a span; it returns the error at that position. An
// error it cannot narrow down is returned at the start of raw.
func locatePdataError(raw []byte, err error) error {
	if found := locateIn(0, raw, 0, ""); found != nil {
		return found
	}
	return &offsetError{off: 0, err: pdataMessage(err)}
}

// locateIn looks, in the object obj found at offset base, for the failing
// object of level's array and, in it, the failing field.
func locateIn(level int, obj []byte, base int, path string) error {
	var found error
	array := otlpLevels[level].key
	levelElements(obj, array, func(i, off int, elem []byte) bool {
		err := decodeAlone(level, elem)
		if err == nil {
			return true
		}
		at := fmt.Sprintf("%s[%d]", array.json, i)
		if path != "" {
			at = path + "." + at
		}
		found = &offsetError{off: base + off, err: &fieldError{path: at, err: pdataMessage(err)}}
		walkFields(elem, func(key string, foff int, v []byte) bool {
			ferr := decodeAlone(level, fieldObject(key, v))
			if ferr == nil {
				return true
			}
			if level+1 < len(otlpLevels) && otlpLevels[level+1].key.names(key) {
				if deeper := locateIn(level+1, elem, base+off, at); deeper != nil {
					found = deeper
					return false
				}
			}
			found = &offsetError{off: base + off + foff, err: &fieldError{path: at + "." + key, err: pdataMessage(ferr)}}
			return false
		})
		return false
	})
	return found
}

// locateSpan returns err at the position of the span at index at.
func locateSpan(raw []byte, at [3]int, err error) error {
	var keys [3]otlpKey
	for i, l := range otlpLevels {
		keys[i] = l.key
	}
	return locate(raw, keys, at, spanPath(at), err)
}

// locate returns err, named by path, at the position in raw of the object
// at index at of the nested arrays (an OTLP document's three levels), or
// at the start when raw does not hold it.
func locate(raw []byte, keys [3]otlpKey, at [3]int, path string, err error) error {
	found := &offsetError{off: 0, err: &fieldError{path: path, err: err}}
	value, base := raw, 0
	for level, key := range keys {
		ok := false
		find := func(i, off int, elem []byte) bool {
			if i == at[level] {
				value, base, ok = elem, base+off, true
			}
			return !ok
		}
		levelElements(value, key, find)
		if !ok {
			return found
		}
	}
	found.off = base
	return found
}

// eachElement calls visit with the index, byte offset and text of every
// element of the arrays under key in the JSON object obj, until visit
// returns false. A key given twice (in either spelling) is read as pdata
// reads it: the second array's elements follow the first's, their indexes
// going on.
func eachElement(obj []byte, key otlpKey, visit func(i, off int, elem []byte) bool) (n int) {
	more := true
	walkFields(obj, func(k string, off int, arr []byte) bool {
		if !key.is(k) {
			return true
		}
		walkElements(arr, func(_, eoff int, elem []byte) bool {
			more = visit(n, off+eoff, elem)
			n++
			return more
		})
		return more
	})
	return n
}

// levelElements is eachElement over a level's elements as pdata reads
// them: its key's, or its deprecated key's when it has none (pdata's
// otlp.MigrateTraces and MigrateLogs).
func levelElements(obj []byte, key otlpKey, visit func(i, off int, elem []byte) bool) {
	if eachElement(obj, key, visit) == 0 && key.deprecated != nil {
		eachElement(obj, *key.deprecated, visit)
	}
}

func spanPath(at [3]int) string {
	return fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", at[0], at[1], at[2])
}

// fieldObject writes {key: value}.
func fieldObject(key string, value []byte) []byte {
	k, _ := json.Marshal(key)
	obj := make([]byte, 0, len(k)+len(value)+3)
	obj = append(append(append(obj, '{'), k...), ':')
	return append(append(obj, value...), '}')
}

// member returns the offset and text of the value of key in the JSON
// object obj.
func member(obj []byte, key string) (off int, value []byte, ok bool) {
	walkFields(obj, func(k string, o int, v []byte) bool {
		if k == key {
			off, value, ok = o, v, true
			return false
		}
		return true
	})
	return off, value, ok
}

// element returns the offset and text of the i-th element of the JSON
// array arr.
func element(arr []byte, i int) (off int, value []byte, ok bool) {
	walkElements(arr, func(j, o int, v []byte) bool {
		if j == i {
			off, value, ok = o, v, true
			return false
		}
		return true
	})
	return off, value, ok
}

// walkFields calls visit with the key, the byte offset of the value and the
// value of every member of the JSON object obj, until visit returns false.
// It serves error reporting only: it stops quietly at anything unexpected.
func walkFields(obj []byte, visit func(key string, off int, value []byte) bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return
		}
		off := skipSpace(obj, int(dec.InputOffset()))
		var value json.RawMessage
		if dec.Decode(&value) != nil || !visit(key, off, value) {
			return
		}
	}
}

// walkElements calls visit with the index, byte offset and text of every
// element of the JSON array arr, until visit returns false.
func walkElements(arr []byte, visit func(i, off int, elem []byte) bool) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return
	}
	for i := 0; dec.More(); i++ {
		off := skipSpace(arr, int(dec.InputOffset()))
		var elem json.RawMessage
		if dec.Decode(&elem) != nil || !visit(i, off, elem) {
			return
		}
	}
}

// skipSpace returns the offset of the first byte at or after off that is
// neither JSON white space nor a separator (',' or ':').
func skipSpace(raw []byte, off int) int {
	for off < len(raw) {
		switch raw[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
