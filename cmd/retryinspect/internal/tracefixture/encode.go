// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package tracefixture

import (
	"context"
	"fmt"
	"io"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// WriteOTLP writes the spans of roots as the Collector's file exporter
// would: the real OTLP exporter of the SDK turns them into the protobuf
// ExportTraceServiceRequest it sends, the Collector's pdata reads that as
// its OTLP receiver does, and pdata's JSON marshaler writes it, as the file
// exporter does: one request per line (here one per trace).
func WriteOTLP(w io.Writer, roots ...Span) error {
	for _, spans := range byTrace(Record(roots...)) {
		td, err := toPdata(spans)
		if err != nil {
			return err
		}
		line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// WriteJaeger writes the spans of roots as one answer of Jaeger's
// /api/v3/traces: {"result": TracesData}, the TracesData written by pdata's
// JSON marshaler, which is what Jaeger's HTTP gateway uses. All traces go
// into one TracesData, as Jaeger combines a search's traces.
func WriteJaeger(w io.Writer, roots ...Span) error {
	td, err := toPdata(Record(roots...))
	if err != nil {
		return err
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "{\"result\":%s}\n", body)
	return err
}

// toPdata runs spans through the SDK's OTLP exporter and reads what it
// would send with pdata.
func toPdata(spans []sdktrace.ReadOnlySpan) (ptrace.Traces, error) {
	c := &captureClient{}
	exp, err := otlptrace.New(context.Background(), c)
	if err != nil {
		return ptrace.Traces{}, err
	}
	if err := Export(context.Background(), exp, spans); err != nil {
		return ptrace.Traces{}, err
	}
	wire, err := proto.Marshal(&collectorpb.ExportTraceServiceRequest{ResourceSpans: c.spans})
	if err != nil {
		return ptrace.Traces{}, err
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(wire); err != nil {
		return ptrace.Traces{}, err
	}
	return req.Traces(), nil
}

// captureClient is an otlptrace.Client that keeps what the exporter
// uploads instead of sending it.
type captureClient struct {
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
}

func (c *captureClient) Start(context.Context) error { return nil }
func (c *captureClient) Stop(context.Context) error  { return nil }

func (c *captureClient) UploadTraces(_ context.Context, spans []*tracepb.ResourceSpans) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, spans...)
	return nil
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
