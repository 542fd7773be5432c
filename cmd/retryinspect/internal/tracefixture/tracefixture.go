// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package tracefixture

import (
	"context"
	"encoding/binary"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Base is the instant every crafted offset is counted from.
var Base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// ServiceName is the service.name of crafted spans.
const ServiceName = "retryinspect-fixture"

// Span describes one span and its children.
type Span struct {
	Name       string
	Kind       trace.SpanKind
	Start, End time.Duration // offsets from Base
	Attrs      []attribute.KeyValue
	Events     []Event
	Children   []Span
	Omit       bool // created (children point at it) but never exported
	Repeat     int  // exported this many extra times (duplicate delivery)
	// Tamper, when set, exports the span once more with these attributes
	// in place of its own: one span id with differing content.
	Tamper []attribute.KeyValue
	// Service, when set, is the service.name of the span's resource
	// instead of the trace's: a span another service recorded (the
	// server's, under an attempt).
	Service string
}

// Event is an event of a span: its name, its time (an offset from Base)
// and its attributes.
type Event struct {
	Name  string
	At    time.Duration
	Attrs []attribute.KeyValue
}

// Options vary what Record produces, for runs against a shared backend.
type Options struct {
	Service     string    // service.name; ServiceName when empty
	TraceIDHigh uint64    // high half of every trace id (0: ids 1, 2, 3...)
	Base        time.Time // instant offsets count from; Base when zero
}

// Record creates every root in a trace of its own, with trace and span ids
// counted from 1 in creation order, and returns the exported spans in the
// order they ended (children before parents), repeats included.
func Record(roots ...Span) []sdktrace.ReadOnlySpan { return Options{}.Record(roots...) }

// Record is the package's Record with options o.
func (o Options) Record(roots ...Span) []sdktrace.ReadOnlySpan {
	if o.Service == "" {
		o.Service = ServiceName
	}
	if o.Base.IsZero() {
		o.Base = Base
	}
	rec := &recorder{base: o.Base, omit: map[trace.SpanID]bool{}, repeat: map[trace.SpanID]int{}, tamper: map[trace.SpanID][]attribute.KeyValue{},
		service: map[trace.SpanID]*resource.Resource{}}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(&sequentialIDs{high: o.TraceIDHigh}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(o.Service))),
		sdktrace.WithSpanProcessor(rec),
	)
	tracer := tp.Tracer("retryinspect/tracefixture")
	for _, root := range roots {
		rec.build(context.Background(), tracer, root)
	}
	_ = tp.Shutdown(context.Background())
	return rec.spans
}

// WriteStdout writes the spans of roots through the real stdouttrace
// exporter, pretty-printed (its WithPrettyPrint option) or not.
func WriteStdout(w io.Writer, pretty bool, roots ...Span) error {
	opts := []stdouttrace.Option{stdouttrace.WithWriter(w)}
	if pretty {
		opts = append(opts, stdouttrace.WithPrettyPrint())
	}
	exp, err := stdouttrace.New(opts...)
	if err != nil {
		return err
	}
	return Export(context.Background(), exp, Record(roots...))
}

// Export hands spans to exp in one batch and shuts exp down.
func Export(ctx context.Context, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) error {
	if err := exp.ExportSpans(ctx, spans); err != nil {
		return err
	}
	return exp.Shutdown(ctx)
}

type recorder struct {
	base   time.Time
	mu     sync.Mutex
	spans  []sdktrace.ReadOnlySpan
	omit   map[trace.SpanID]bool
	repeat map[trace.SpanID]int
	tamper map[trace.SpanID][]attribute.KeyValue
	// service holds the resource of the spans of another service.
	service map[trace.SpanID]*resource.Resource
}

func (r *recorder) build(ctx context.Context, tracer trace.Tracer, s Span) {
	ctx, span := tracer.Start(ctx, s.Name,
		trace.WithSpanKind(s.Kind),
		trace.WithTimestamp(r.base.Add(s.Start)),
		trace.WithAttributes(s.Attrs...))
	for _, e := range s.Events {
		span.AddEvent(e.Name, trace.WithTimestamp(r.base.Add(e.At)), trace.WithAttributes(e.Attrs...))
	}
	id := span.SpanContext().SpanID()
	r.mu.Lock()
	r.omit[id], r.repeat[id], r.tamper[id] = s.Omit, s.Repeat, s.Tamper
	if s.Service != "" {
		r.service[id] = resource.NewSchemaless(semconv.ServiceName(s.Service))
	}
	r.mu.Unlock()
	for _, child := range s.Children {
		r.build(ctx, tracer, child)
	}
	span.End(trace.WithTimestamp(r.base.Add(s.End)))
}

func (r *recorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (r *recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := s.SpanContext().SpanID()
	if r.omit[id] {
		return
	}
	if res := r.service[id]; res != nil {
		s = ofService{ReadOnlySpan: s, res: res}
	}
	for range 1 + r.repeat[id] {
		r.spans = append(r.spans, s)
	}
	if attrs := r.tamper[id]; attrs != nil {
		r.spans = append(r.spans, tampered{ReadOnlySpan: s, attrs: attrs})
	}
}

// tampered is a delivery of a span with other attributes.
type tampered struct {
	sdktrace.ReadOnlySpan
	attrs []attribute.KeyValue
}

func (t tampered) Attributes() []attribute.KeyValue { return t.attrs }

// ofService is a span of another service than the trace's.
type ofService struct {
	sdktrace.ReadOnlySpan
	res *resource.Resource
}

func (s ofService) Resource() *resource.Resource { return s.res }

func (r *recorder) Shutdown(context.Context) error   { return nil }
func (r *recorder) ForceFlush(context.Context) error { return nil }

// sequentialIDs numbers traces and spans 1, 2, 3... so fixtures and golden
// files are stable.
type sequentialIDs struct {
	mu          sync.Mutex
	high        uint64
	trace, span uint64
}

func (g *sequentialIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.trace++
	g.span++
	var tid trace.TraceID
	binary.BigEndian.PutUint64(tid[:8], g.high)
	binary.BigEndian.PutUint64(tid[8:], g.trace)
	return tid, g.spanID()
}

func (g *sequentialIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.span++
	return g.spanID()
}

func (g *sequentialIDs) spanID() trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.span)
	return sid
}
