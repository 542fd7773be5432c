package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// telemetry holds the demo's providers. Besides the exporter, spans go to
// an in-memory recorder and metrics to a manual reader, from which the demo
// prints its tables: what it prints is read back from the telemetry itself.
type telemetry struct {
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	spans    *tracetest.SpanRecorder
	reader   *sdkmetric.ManualReader
	exporter string
	service  string
}

// otlpEnabled reports whether the standard OTLP environment asks for export.
func otlpEnabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// newTelemetry exports traces with stdouttrace to tracesOut, or over OTLP
// HTTP (traces and metrics) when OTEL_EXPORTER_OTLP_ENDPOINT is set.
// Export errors are reported on stderr and never fail a request.
func newTelemetry(ctx context.Context, tracesOut io.Writer) (*telemetry, error) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintln(os.Stderr, "telemetry (requests unaffected):", err)
	}))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	// service.instance.id keeps the cumulative series of short-lived runs
	// apart; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override both.
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "otelretry-demo"),
			attribute.String("service.instance.id", otelretry.NewOperationID()[3:]),
		),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, err
	}
	t := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	if v, ok := res.Set().Value("service.name"); ok {
		t.service = v.AsString()
	}

	traceOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSpanProcessor(t.spans)}
	meterOpts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(t.reader)}
	if otlpEnabled() {
		te, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		me, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		traceOpts = append(traceOpts, sdktrace.WithBatcher(te))
		meterOpts = append(meterOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(exportInterval()))))
		t.exporter = "otlp"
	} else {
		te, err := stdouttrace.New(stdouttrace.WithWriter(tracesOut))
		if err != nil {
			return nil, err
		}
		traceOpts = append(traceOpts, sdktrace.WithBatcher(te))
		t.exporter = "stdout"
	}
	t.tp = sdktrace.NewTracerProvider(traceOpts...)
	t.mp = sdkmetric.NewMeterProvider(meterOpts...)
	return t, nil
}

// exportInterval honours OTEL_METRIC_EXPORT_INTERVAL (ms) and otherwise
// exports every 2s, so a short demo run reaches the backend.
func exportInterval() time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("OTEL_METRIC_EXPORT_INTERVAL")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 2 * time.Second
}

// flush pushes buffered telemetry out, bounded in time: an unreachable
// collector delays the end of the demo by at most the timeout.
func (t *telemetry) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := t.tp.ForceFlush(ctx); err != nil {
		otel.Handle(err)
	}
	if err := t.mp.ForceFlush(ctx); err != nil {
		otel.Handle(err)
	}
}

func (t *telemetry) shutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		otel.Handle(err)
	}
	if err := t.mp.Shutdown(ctx); err != nil {
		otel.Handle(err)
	}
}
