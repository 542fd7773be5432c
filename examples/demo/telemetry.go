// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/redact"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Exporter names the demo reports (summary "exporter"), as
// OTEL_TRACES_EXPORTER spells them, plus the embedded default.
const (
	exporterOTLP    = "otlp"
	exporterConsole = "console"
	exporterNone    = "none"
	// exporterFile is the default when nothing is configured: stdouttrace
	// JSON to a file, so the terminal shows the report.
	exporterFile = "file"
	// exporterStdout is -traces -: stdouttrace JSON on stdout, after the report.
	exporterStdout = "stdout"
)

// telemetry holds the demo's providers. Besides the exporters, spans go to
// an in-memory recorder and metrics to a manual reader, from which the demo
// prints its report: what it prints is read back from the telemetry itself.
type telemetry struct {
	// exportBy is when flush and shutdown give up on the exporters (see
	// exportContext); zero until the first of them runs.
	exportBy time.Time
	tp       *sdktrace.TracerProvider
	// serverTP records the flaky server's spans, as another service
	// (serverService), into the same span processors as tp.
	serverTP *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	// lp emits the transport's log events (WithLoggerProvider); nil when
	// they go nowhere (the default), so the transport builds none.
	lp     *sdklog.LoggerProvider
	prop   propagation.TextMapPropagator
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader

	service string
	// sampler is OTEL_TRACES_SAMPLER when it may leave spans unsampled (the
	// SDK reads it): the report then reads back the sampled operations
	// only, and does not hold them to the metrics' counts.
	sampler string
	// traces, metrics and logs describe where each signal goes, for the report.
	traces, metrics, logs exportTarget
	// terminal is set when the spans are written to the terminal: they are
	// exported from the recorder after the report (exportToTerminal), so
	// the report comes first.
	terminal sdktrace.SpanExporter
	// tracesFile is the default exporter's file, closed at shutdown;
	// tracesMade is the file the demo made for it ("" when it was there
	// before): through a link that pointed at nothing, the file the link
	// points at now, never the link.
	tracesFile *os.File
	tracesMade string
	// logRecords keeps the log records for logTerminal (console), which
	// writes them after the report and the spans.
	logRecords  *logRecorder
	logTerminal sdklog.Exporter
}

// exportTarget says where a signal goes.
type exportTarget struct {
	Exporter string `json:"exporter"`           // exporterOTLP, exporterFile, ...
	Protocol string `json:"protocol,omitempty"` // OTLP: grpc or http/protobuf
	// Endpoint is, for OTLP, the endpoint as configured (a shared one over
	// http/protobuf is the base the exporter adds /v1/traces, /v1/metrics
	// or /v1/logs to); for a file, its path; for prometheus, its scrape URL.
	Endpoint string `json:"endpoint,omitempty"`
	// Temporary marks the file the demo created itself: it is removed at
	// exit.
	Temporary bool `json:"temporary,omitempty"`
}

func (e exportTarget) String() string {
	switch e.Exporter {
	case exporterOTLP:
		s := "OTLP " + e.Protocol
		if e.Endpoint != "" {
			s += " to " + e.Endpoint
		}
		return s
	case exporterFile:
		if e.Temporary {
			return "stdouttrace JSON in a temporary file, removed at exit (-traces FILE keeps them)"
		}
		return "stdouttrace JSON in " + e.Endpoint
	case exporterStdout, exporterConsole:
		return "stdouttrace JSON below"
	case exporterNone:
		return "not exported"
	case "prometheus":
		if e.Endpoint == "" {
			return "Prometheus, served on a port the system chose, while the demo ran"
		}
		return "Prometheus, served at " + e.Endpoint + " while the demo ran"
	}
	return e.Exporter
}

// Standard environment variables (OpenTelemetry SDK configuration). Their
// values are read by autoexport and autoprop; the demo reads them only to
// keep its embedded default and to describe the choice.
const (
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
	envLogsExporter    = "OTEL_LOGS_EXPORTER"
	envExemplarFilter  = "OTEL_METRICS_EXEMPLAR_FILTER"
)

// otlpEndpoint returns the OTLP endpoint configured for a signal ("TRACES",
// "METRICS", "LOGS"), or the shared one.
func otlpEndpoint(signal string) string {
	return redact.String(rawOTLPEndpoint(signal))
}

// rawOTLPEndpoint is otlpEndpoint as the exporters read it, userinfo and
// all.
func rawOTLPEndpoint(signal string) string {
	_, v := otlpEndpointVariable(signal)
	return v
}

// otlpEndpointVariable names the variable the exporters take a signal's
// endpoint from and gives its value as they read it. The trace and metric
// exporters trim the blanks around it (a signal's variable holding only
// blanks passes to the shared one); the log exporters (v0.23) read it as
// written.
func otlpEndpointVariable(signal string) (key, value string) {
	read := os.Getenv
	if signal != "LOGS" {
		read = func(k string) string { return strings.TrimSpace(os.Getenv(k)) }
	}
	key = "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"
	if v := read(key); v != "" {
		return key, v
	}
	key = "OTEL_EXPORTER_OTLP_ENDPOINT"
	return key, read(key)
}

// checkOTLPEndpoints refuses an OTLP endpoint the exporters would not send
// to as written, without failing, which the report would otherwise give as
// where the telemetry went: over http/protobuf, one that is no URL with an
// http or https scheme and a host ("127.0.0.1:4318", a common slip, is
// dropped for localhost; "localhost:4318" reads as a scheme and names no
// host; "grpc://host:4318" is sent to over TLS by the trace and metric
// exporters and in plain HTTP by the log exporter); over gRPC, one
// that does not parse as a URL (a gRPC target, "dns:///host:4317" or
// "localhost:4317", is used as written by the trace and metric exporters,
// and refused when gRPC could not resolve it: grpcTargetProblem; the log
// exporter dials a URL's host alone); and one whose port no dial takes.
// A signal whose exporter is set to other than otlp sends nowhere and is
// not checked. The value is not repeated: it may hold a password.
func checkOTLPEndpoints() error {
	for _, signal := range []string{"TRACES", "METRICS", "LOGS"} {
		if e := os.Getenv("OTEL_" + signal + "_EXPORTER"); e != "" && e != "otlp" {
			continue
		}
		key, v := otlpEndpointVariable(signal)
		if v == "" {
			continue
		}
		if problem := otlpEndpointProblem(v, otlpProtocol(signal) == "grpc", signal == "LOGS"); problem != "" {
			if _, err := url.Parse(v); err != nil {
				problem += " and send to " + endpointInstead(signal, key)
			}
			if strings.TrimSpace(v) != v {
				problem += " (the log exporter, unlike the trace and metric exporters, does not trim the blanks around it)"
			}
			return fmt.Errorf("%s is %s", key, problem)
		}
	}
	return nil
}

// endpointInstead says where a signal's exporter sends when it drops the
// value of key, which does not parse as a URL: to the shared variable's
// endpoint when key is the signal's own and that one parses (the
// exporters pass to the next variable), else to its default.
func endpointInstead(signal, key string) string {
	const shared = "OTEL_EXPORTER_OTLP_ENDPOINT"
	if key != shared {
		v := os.Getenv(shared)
		if signal != "LOGS" {
			v = strings.TrimSpace(v)
		}
		if _, err := url.Parse(v); v != "" && err == nil {
			return shared + "'s endpoint instead"
		}
	}
	return "its default, localhost"
}

// otlpEndpointProblem says why the exporters would not send to endpoint
// as written, as they read it from the environment, or "" if they would.
// The log exporter over gRPC dials a URL's host alone, where the trace and
// metric exporters take a gRPC target as written (logs).
func otlpEndpointProblem(endpoint string, grpc, logs bool) string {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil && grpc:
		return "no URL or gRPC target (such as http://127.0.0.1:4317): the OTLP exporter would drop it"
	case err != nil:
		return "no URL (such as http://127.0.0.1:4318): the OTLP exporter would drop it"
	case grpc && !logs && grpcTargetProblem(u) != "":
		return grpcTargetProblem(u)
	case !dialablePort(endpointPort(u, endpoint, grpc && !logs)):
		return "a URL whose port is no TCP port, 1 to 65535 (such as http://127.0.0.1:4318): the OTLP exporter could not dial it"
	case grpc && logs && u.Host == "":
		return "a gRPC target the log exporter cannot use: it dials a URL's host alone (such as http://127.0.0.1:4317)"
	case grpc:
		return ""
	}
	return httpEndpointProblem(u)
}

// httpEndpointProblem says why the http/protobuf exporters would not send
// to u, a URL whose port a dial takes, or "" if they would.
func httpEndpointProblem(u *url.URL) string {
	switch {
	case u.Host == "":
		return "a URL naming no host (such as http://127.0.0.1:4318): the OTLP exporter would have nowhere to send"
	case u.Scheme != "http" && u.Scheme != "https":
		return "a URL whose scheme is neither http nor https (such as http://127.0.0.1:4318): the OTLP exporters would each choose TLS or plain HTTP for it by a rule of their own"
	}
	return ""
}

// grpcTargetProblem says why gRPC could not resolve the target the trace
// and metric exporters make of u, or "" if it could: an http or https
// URL's host, a target of a scheme grpc-go resolves (dns, passthrough,
// unix, unix-abstract) or of none, as written. Of any other scheme
// ("grpc://host:4317") gRPC reads the whole target as host:port, which it
// is only when the scheme is a host ("localhost:4317").
func grpcTargetProblem(u *url.URL) string {
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return "a URL naming no host (such as http://127.0.0.1:4317): the OTLP exporter would have nowhere to send"
		}
		return ""
	case "", "dns", "passthrough", "unix", "unix-abstract":
		return ""
	}
	host, port, err := net.SplitHostPort(u.String()) // the scheme is the host: never empty
	if err != nil || strings.Contains(host+port, "/") {
		return "a gRPC target whose scheme gRPC has no resolver for, which it then reads whole as host:port (such as dns:///127.0.0.1:4317 or http://127.0.0.1:4317): the OTLP exporter could not dial it"
	}
	return ""
}

// endpointPort is the port endpoint (parsed as u) gives: its URL's, or a
// gRPC target's ("dns:///host:port", "dns://server/host:port",
// "dns:host:port", "passthrough:///host:port", "host:port"; a unix
// socket's path has none),
// "" for none.
func endpointPort(u *url.URL, endpoint string, grpc bool) string {
	if grpc {
		switch u.Scheme {
		case "unix", "unix-abstract":
			return ""
		case "dns", "passthrough":
			if u.Opaque != "" { // "dns:host:port", as grpc-go reads it too
				return portOf(u.Opaque)
			}
			return portOf(strings.TrimPrefix(u.Path, "/"))
		}
	}
	if u.Host != "" {
		return u.Port()
	}
	if grpc {
		return portOf(endpoint)
	}
	return ""
}

// portOf is the port of hostport, "" for none.
func portOf(hostport string) string {
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return ""
	}
	return port
}

// dialablePort reports whether port, a URL's, is none (the scheme's) or
// one a dial takes: url.Parse takes any digits.
func dialablePort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// otlpProtocol returns the OTLP protocol autoexport uses for a signal.
func otlpProtocol(signal string) string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "http/protobuf"
}

// newTelemetry configures traces, metrics and propagation from the standard
// OTEL_* environment with contrib's autoexport and autoprop. Two defaults
// are the demo's own:
//   - nothing set: spans go as stdouttrace JSON to tracesPath (a new
//     temporary file when empty, removed at shutdown; stdout after the
//     report for "-"), metrics nowhere (the report shows them), log events
//     nowhere (the transport builds none);
//   - spans and log records for the terminal (console, "-") are written
//     after the report;
//   - OTEL_EXPORTER_OTLP_ENDPOINT alone: traces, metrics and logs over
//     OTLP, as the OTEL_*_EXPORTER default (otlp) says.
//
// Export errors are reported on stderr and never fail a request.
func newTelemetry(ctx context.Context, tracesPath string, stdout io.Writer) (*telemetry, error) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintln(os.Stderr, "telemetry (requests unaffected):", err)
	}))
	if err := checkOTLPEndpoints(); err != nil {
		return nil, err
	}
	t := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	// OTEL_PROPAGATORS (default tracecontext,baggage). The transport, the
	// state check's client and the server use the global propagator.
	t.prop = autoprop.NewTextMapPropagator()
	otel.SetTextMapPropagator(t.prop)

	res, serverRes, err := resources(ctx)
	if err != nil {
		return nil, err
	}
	if v, ok := res.Set().Value("service.name"); ok {
		t.service = v.AsString()
	}

	processors := []sdktrace.SpanProcessor{t.spans}
	se, err := t.spanExporter(ctx, tracesPath, stdout)
	if err != nil {
		return nil, err
	}
	built := false
	defer func() {
		if !built { // a later step failed: run never shuts t down
			t.discardTracesFile()
		}
	}()
	switch {
	case autoexport.IsNoneSpanExporter(se):
	case t.traces.Exporter == exporterConsole || t.traces.Exporter == exporterStdout:
		t.terminal = se
	default:
		processors = append(processors, sdktrace.NewBatchSpanProcessor(se))
	}
	// The server's spans go to the same processors, so that one trace
	// file holds both sides.
	traceOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	serverOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(serverRes)}
	for _, p := range processors {
		traceOpts = append(traceOpts, sdktrace.WithSpanProcessor(p))
		serverOpts = append(serverOpts, sdktrace.WithSpanProcessor(p))
	}

	meterOpts, err := t.meterOptions(ctx, res)
	if err != nil {
		return nil, err
	}
	if err := t.logProvider(ctx, res); err != nil {
		return nil, err
	}
	t.sampler = chosenSampler()
	t.tp = sdktrace.NewTracerProvider(traceOpts...)
	t.serverTP = sdktrace.NewTracerProvider(serverOpts...)
	if err := t.emptyTracesFile(); err != nil {
		return nil, err
	}
	t.mp = sdkmetric.NewMeterProvider(meterOpts...)
	built = true
	return t, nil
}

// resources are the demo client's resource and its server's. The client's
// service.instance.id keeps the cumulative series of short-lived runs
// apart; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override both. The
// server is another service: its resource is its own (OTEL_SERVICE_NAME
// names the demo's client, not it).
func resources(ctx context.Context) (client, server *resource.Resource, err error) {
	client, err = resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "otelretry-demo"),
			attribute.String("service.instance.id", otelretry.NewOperationID()[3:]),
		),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, err
	}
	server, err = resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", serverService)), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, err
	}
	return client, server, nil
}

// meterOptions are the meter provider's options: the report's reader,
// and OTEL_METRICS_EXPORTER's reader when it or an OTLP endpoint is set
// (t.metrics says which).
func (t *telemetry) meterOptions(ctx context.Context, res *resource.Resource) ([]sdkmetric.Option, error) {
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(t.reader)}
	if os.Getenv(envExemplarFilter) == "" {
		// The SDK's default, stated: exemplars carry the trace and span id
		// of sampled spans, so a dashboard can link a point to its trace.
		opts = append(opts, sdkmetric.WithExemplarFilter(exemplar.TraceBasedFilter))
	}
	t.metrics = exportTarget{Exporter: exporterNone}
	if os.Getenv(envMetricsExporter) == "" && otlpEndpoint("METRICS") == "" {
		return opts, nil
	}
	r, err := autoexport.NewMetricReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("metric exporter (%s): %w", envMetricsExporter, err)
	}
	t.metrics = describe(envMetricsExporter, "METRICS")
	if !autoexport.IsNoneMetricReader(r) {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	return opts, nil
}

// chosenSampler is OTEL_TRACES_SAMPLER when it is one that may drop spans,
// "" for the SDK's default or one that samples all.
func chosenSampler() string {
	if s := os.Getenv("OTEL_TRACES_SAMPLER"); s != "" && s != "always_on" && s != "parentbased_always_on" {
		return s
	}
	return ""
}

// logProvider sets up the log events from OTEL_LOGS_EXPORTER with
// autoexport: otlp (batched), console (kept, then written after the
// report) or none. With neither it nor an OTLP endpoint set, the demo's
// default is none, and t.lp stays nil.
func (t *telemetry) logProvider(ctx context.Context, res *resource.Resource) error {
	t.logs = exportTarget{Exporter: exporterNone}
	if os.Getenv(envLogsExporter) == "" && otlpEndpoint("LOGS") == "" {
		return nil
	}
	le, err := autoexport.NewLogExporter(ctx)
	if err != nil {
		return fmt.Errorf("log exporter (%s): %w", envLogsExporter, err)
	}
	t.logs = describe(envLogsExporter, "LOGS")
	var p sdklog.Processor
	switch {
	case autoexport.IsNoneLogExporter(le):
		return nil
	case t.logs.Exporter == exporterConsole:
		t.logRecords, t.logTerminal = &logRecorder{}, le
		p = t.logRecords
	default:
		p = sdklog.NewBatchProcessor(le)
	}
	t.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(p))
	return nil
}

// retryOptions are the transport's telemetry options.
func (t *telemetry) retryOptions() []otelretry.Option {
	opts := []otelretry.Option{otelretry.WithTracerProvider(t.tp), otelretry.WithMeterProvider(t.mp)}
	if t.lp != nil {
		opts = append(opts, otelretry.WithLoggerProvider(t.lp))
	}
	return opts
}

// logRecorder is a log processor that keeps every record, for the console
// exporter to write after the report.
type logRecorder struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (r *logRecorder) OnEmit(_ context.Context, rec *sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

func (r *logRecorder) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (r *logRecorder) Shutdown(context.Context) error                         { return nil }
func (r *logRecorder) ForceFlush(context.Context) error                       { return nil }

func (r *logRecorder) all() []sdklog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// spanExporter lets autoexport choose from OTEL_TRACES_EXPORTER, with the
// demo's file default when neither it nor an OTLP endpoint is set.
func (t *telemetry) spanExporter(ctx context.Context, tracesPath string, stdout io.Writer) (sdktrace.SpanExporter, error) {
	var opts []autoexport.SpanOption
	if otlpEndpoint("TRACES") == "" {
		opts = append(opts, autoexport.WithFallbackSpanExporter(func(context.Context) (sdktrace.SpanExporter, error) {
			if tracesPath == "-" {
				t.traces = exportTarget{Exporter: exporterStdout}
				return stdouttrace.New(stdouttrace.WithWriter(stdout))
			}
			f, made, err := openTracesFile(tracesPath)
			if err != nil {
				return nil, &tracesFileError{err}
			}
			t.tracesFile, t.tracesMade = f, made
			t.traces = exportTarget{Exporter: exporterFile, Endpoint: f.Name(), Temporary: tracesPath == ""}
			return stdouttrace.New(stdouttrace.WithWriter(f))
		}))
	}
	se, err := autoexport.NewSpanExporter(ctx, opts...)
	var fileErr *tracesFileError
	switch {
	case errors.As(err, &fileErr):
		return nil, fmt.Errorf("traces file (-traces): %w", fileErr.err)
	case err != nil:
		return nil, fmt.Errorf("span exporter (%s): %w", envTracesExporter, err)
	}
	if t.traces.Exporter == "" {
		t.traces = describe(envTracesExporter, "TRACES")
	}
	return se, nil
}

// tracesFileError is the -traces file's failure, told apart from the
// environment's exporter's.
type tracesFileError struct{ err error }

func (e *tracesFileError) Error() string { return e.err.Error() }
func (e *tracesFileError) Unwrap() error { return e.err }

// describe names what autoexport chose for a signal from the environment.
func describe(envKey, signal string) exportTarget {
	name := os.Getenv(envKey)
	if name == "" {
		name = exporterOTLP // autoexport's default
	}
	e := exportTarget{Exporter: name}
	switch name {
	case exporterOTLP:
		e.Protocol, e.Endpoint = otlpProtocol(signal), otlpEndpoint(signal)
	case "prometheus":
		// autoexport's Prometheus server, on its documented defaults, its
		// address joined as autoexport joins it, host + ":" + port (an IPv6
		// host must be given in brackets, [::1], for it to listen at all);
		// it serves only while the demo runs. Port 0 is one the
		// system chooses, which autoexport does not tell: no address then.
		if port := envOr("OTEL_EXPORTER_PROMETHEUS_PORT", "9464"); port != "0" {
			e.Endpoint = "http://" + envOr("OTEL_EXPORTER_PROMETHEUS_HOST", "localhost") + ":" + port + "/metrics"
		}
	}
	return e
}

// envOr is the environment variable key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// openTracesFile opens path for writing without emptying it, so that a
// setup step that fails after it leaves a file of the user's as it was
// (emptyTracesFile empties it once setup is done), or a new file in the
// temporary directory when path is empty. made is the file it made, if
// any (see telemetry.tracesMade).
func openTracesFile(path string) (f *os.File, made string, err error) {
	if path == "" {
		f, err = os.CreateTemp("", "otelretry-demo-spans-*.json")
		if err != nil {
			return nil, "", err
		}
		return f, f.Name(), nil
	}
	_, statErr := os.Stat(path)
	if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666); err != nil {
		return nil, "", err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if made, err = filepath.EvalSymlinks(path); err != nil {
			made = ""
		}
	}
	return f, made, nil
}

// emptyTracesFile empties the spans file, once nothing in setup can fail
// after it; a device or a pipe is written as it is.
func (t *telemetry) emptyTracesFile() error {
	if t.tracesFile == nil {
		return nil
	}
	if fi, err := t.tracesFile.Stat(); err != nil || !fi.Mode().IsRegular() {
		return err
	}
	return t.tracesFile.Truncate(0)
}

// exportToTerminal writes the recorded spans, then the recorded log
// records, to their terminal exporters, after the report.
func (t *telemetry) exportToTerminal(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if t.terminal != nil {
		if err := t.terminal.ExportSpans(ctx, t.spans.Ended()); err != nil {
			otel.Handle(err)
		}
		if err := t.terminal.Shutdown(ctx); err != nil {
			otel.Handle(err)
		}
	}
	if t.logTerminal != nil {
		if err := t.logTerminal.Export(ctx, t.logRecords.all()); err != nil {
			otel.Handle(err)
		}
		if err := t.logTerminal.Shutdown(ctx); err != nil {
			otel.Handle(err)
		}
	}
}

// propagationFields are the header names the configured propagators write.
func (t *telemetry) propagationFields() []string {
	f := slices.Clone(t.prop.Fields())
	for i := range f {
		f[i] = strings.ToLower(f[i])
	}
	slices.Sort(f)
	return slices.Compact(f)
}

// exportTimeout bounds flush and shutdown together: an unreachable
// collector delays the end of the demo by at most this much.
const exportTimeout = 5 * time.Second

// exportContext is ctx with the deadline flush and shutdown share, set by
// the first of them to run.
func (t *telemetry) exportContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.exportBy.IsZero() {
		t.exportBy = time.Now().Add(exportTimeout)
	}
	return context.WithDeadline(ctx, t.exportBy)
}

// flush pushes buffered telemetry out, bounded in time (exportTimeout,
// shared with shutdown).
func (t *telemetry) flush(ctx context.Context) {
	ctx, cancel := t.exportContext(ctx)
	defer cancel()
	if err := t.tp.ForceFlush(ctx); err != nil {
		otel.Handle(err)
	}
	if err := t.mp.ForceFlush(ctx); err != nil {
		otel.Handle(err)
	}
	if t.lp != nil {
		if err := t.lp.ForceFlush(ctx); err != nil {
			otel.Handle(err)
		}
	}
}

func (t *telemetry) shutdown(ctx context.Context) {
	ctx, cancel := t.exportContext(ctx)
	defer cancel()
	// The server's provider shares the client's processors: shutting the
	// client's down flushes both; the second shutdown finds them stopped.
	if err := t.tp.Shutdown(ctx); err != nil {
		otel.Handle(err)
	}
	if err := t.serverTP.Shutdown(ctx); err != nil {
		otel.Handle(err)
	}
	if err := t.mp.Shutdown(ctx); err != nil {
		otel.Handle(err)
	}
	if t.lp != nil {
		if err := t.lp.Shutdown(ctx); err != nil {
			otel.Handle(err)
		}
	}
	t.closeTracesFile()
}

// closeTracesFile closes the spans file, which stdouttrace does not close,
// and removes it when it is the demo's temporary one.
func (t *telemetry) closeTracesFile() {
	remove := ""
	if t.traces.Temporary {
		remove = t.tracesMade
	}
	t.closeTracesFileAndRemove(remove)
}

// discardTracesFile closes the spans file after a setup step failed, and
// removes the file the demo made, if any: a file of the user's, and a
// link, stay as they were.
func (t *telemetry) discardTracesFile() { t.closeTracesFileAndRemove(t.tracesMade) }

// closeTracesFileAndRemove closes the spans file, then removes the file
// named remove ("": none).
func (t *telemetry) closeTracesFileAndRemove(remove string) {
	if t.tracesFile == nil {
		return
	}
	if err := t.tracesFile.Close(); err != nil {
		otel.Handle(err)
	}
	if remove != "" {
		if err := os.Remove(remove); err != nil {
			otel.Handle(err)
		}
	}
}

// writeTelemetry tells where the spans, metrics and log events went, and which
// propagation headers reached the server.
func writeTelemetry(w io.Writer, t *telemetry, seen []string) {
	headers := "none"
	if len(seen) > 0 {
		headers = strings.Join(seen, ", ")
	}
	fmt.Fprintf(w, "\nTelemetry (set with OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_LOGS_EXPORTER, OTEL_EXPORTER_OTLP_*, OTEL_PROPAGATORS)\n")
	fmt.Fprintf(w, "  spans:   %s\n", t.traces)
	metrics := t.metrics.String()
	if t.metrics.Exporter == exporterConsole || t.metrics.Exporter == exporterStdout {
		metrics = "stdoutmetric JSON below"
	}
	fmt.Fprintf(w, "  metrics: %s\n", metrics)
	if t.sampler != "" {
		fmt.Fprintf(w, "  sampling: OTEL_TRACES_SAMPLER=%s: the operations read back are the sampled ones\n", t.sampler)
	}
	logs := t.logs.String()
	switch t.logs.Exporter {
	case exporterConsole:
		logs = "stdoutlog JSON below, after the report (and the spans, when they are printed)"
	case exporterNone:
		logs = "not exported (set OTEL_LOGS_EXPORTER=console or otlp for the retry.attempt and retry.operation events)"
	}
	fmt.Fprintf(w, "  logs:    %s\n", logs)
	fmt.Fprintf(w, "  propagation headers seen by the server: %s\n", headers)
}
