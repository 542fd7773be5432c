// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package model is the neutral span model of retryinspect: every reader
// (OTLP JSON from the Collector or Jaeger, stdouttrace) produces it and the
// inspector consumes it, so the checks never depend on where the spans came
// from.
package model

import (
	"strconv"
	"strings"
	"time"
)

// Kind is the span kind, numbered as in OTLP and the OpenTelemetry Go API.
type Kind int

// The span kinds.
const (
	KindUnspecified Kind = iota
	KindInternal
	KindServer
	KindClient
	KindProducer
	KindConsumer
)

var kindNames = [...]string{"unspecified", "internal", "server", "client", "producer", "consumer"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Type is the type of an attribute value.
type Type int

// The attribute value types. TypeOther covers arrays, maps and bytes, which
// the retry contract never uses; their Str holds a textual rendering.
const (
	TypeString Type = iota
	TypeInt
	TypeFloat
	TypeBool
	TypeOther
)

var typeNames = [...]string{"string", "int", "float", "bool", "other"}

func (t Type) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Value is a typed attribute value. Only the field matching Type is set,
// except for TypeOther, whose Str is a rendering of the value.
type Value struct {
	Type  Type
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// String returns a Value of TypeString.
func String(s string) Value { return Value{Type: TypeString, Str: s} }

// Int returns a Value of TypeInt.
func Int(i int64) Value { return Value{Type: TypeInt, Int: i} }

// Float returns a Value of TypeFloat.
func Float(f float64) Value { return Value{Type: TypeFloat, Float: f} }

// Bool returns a Value of TypeBool.
func Bool(b bool) Value { return Value{Type: TypeBool, Bool: b} }

// Other returns a Value of TypeOther rendered as text.
func Other(text string) Value { return Value{Type: TypeOther, Str: text} }

// Text renders v for messages.
func (v Value) Text() string {
	switch v.Type {
	case TypeInt:
		return strconv.FormatInt(v.Int, 10)
	case TypeFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case TypeBool:
		return strconv.FormatBool(v.Bool)
	default:
		return v.Str
	}
}

// Attribute is one key-value pair of a span.
type Attribute struct {
	Key   string
	Value Value
}

// Event is one event of a span: its name, time and attributes.
type Event struct {
	Name       string
	Time       time.Time
	Attributes []Attribute
}

// Attr returns the first attribute of e named key.
func (e *Event) Attr(key string) (Value, bool) { return attr(e.Attributes, key) }

// Span is one span, whatever format it was read from. Ids are lower-case
// hex, trace ids padded to 32 and span ids to 16 digits; ParentID is empty
// for a root span.
//
// A Span with Log set stands for a log record (the retry.attempt or
// retry.operation event) that a log reader read: its ids are those of the
// span the record was emitted in (either may be empty when the emitter had
// no span), it has no parent (a record does not know it), its Name is the
// event name, and Start and End come from the record's timestamp and the
// durations it carries.
type Span struct {
	TraceID  string
	SpanID   string
	ParentID string
	// ParentRemote: the parent's context came from another process (a
	// server span of a caller upstream), whose spans are not expected in
	// this input; the input said so.
	ParentRemote bool
	Name         string
	Kind         Kind
	Start, End   time.Time
	Attributes   []Attribute
	Events       []Event // in the order recorded; nil for a log record
	Log          bool
	// Service is the service.name of the resource that recorded the span;
	// empty when the input does not say.
	Service string
}

// Attr returns the first attribute named key.
func (s *Span) Attr(key string) (Value, bool) { return attr(s.Attributes, key) }

func attr(kvs []Attribute, key string) (Value, bool) {
	for _, a := range kvs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return Value{}, false
}

// Has reports whether the span carries an attribute named key.
func (s *Span) Has(key string) bool {
	_, ok := s.Attr(key)
	return ok
}

// TraceID normalizes a hex trace id: lower case, left-padded with zeros to
// 32 digits (Jaeger prints 64-bit-high-zero ids with 16 digits). It reports
// false when id is not hex or too long. An all-zero id normalizes to "".
func TraceID(id string) (string, bool) { return normalizeID(id, 32) }

// SpanID normalizes a hex span id like TraceID, to 16 digits.
func SpanID(id string) (string, bool) { return normalizeID(id, 16) }

func normalizeID(id string, width int) (string, bool) {
	if len(id) > width {
		return "", false
	}
	id = strings.ToLower(id)
	zero := true
	for _, c := range id {
		switch {
		case c == '0':
		case c >= '1' && c <= '9', c >= 'a' && c <= 'f':
			zero = false
		default:
			return "", false
		}
	}
	if zero {
		return "", true
	}
	return strings.Repeat("0", width-len(id)) + id, true
}
