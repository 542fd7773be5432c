// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
)

// Exit statuses.
const (
	exitClean    = 0 // no findings
	exitFindings = 1 // at least one finding
	exitError    = 2 // usage or input error
)

const usageHead = `Usage:
  retryinspect --stdout FILE|-        [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]   stdouttrace JSON (a file, or - for stdin)
  retryinspect --otlp FILE|-          [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]   OTLP JSON lines, traces or logs (Collector file exporter)
  retryinspect --jaeger URL --service NAME [--lookback 1h] [--limit N] [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]
  retryinspect --jaeger URL --trace ID [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]
  retryinspect --victorialogs URL [--service NAME] [--lookback 1h] [--limit N] [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]
  retryinspect --victorialogs URL --trace ID [--json] [--html FILE|-] [--strict] [--max-bytes 64MiB]

Reads back the spans of retry operations (this library's or any that
records the retry attempt contract), or the retry.attempt and
retry.operation log events of WithLoggerProvider (OTLP logs JSON, or
VictoriaLogs' query API), prints each operation with its
attempts in order, a summary, the notes and the findings. With --html it
also writes the report as one self-contained HTML page (timelines, an
overview, distributions; - writes it to stdout instead of the text).
Exits 0 when clean, 1 when there are findings (or notes, with --strict),
2 on usage or input errors.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it parses args, reads the spans, prints the
// report on stdout and returns the exit status. Standard input is read
// only for "--stdout -".
func run(args []string, stdout, stderr io.Writer) int {
	c := &command{stdin: os.Stdin, stdout: stdout, stderr: stderr, now: time.Now}
	return c.run(args)
}

type command struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	now            func() time.Time
}

// options are the parsed flags.
type options struct {
	stdoutFile, otlpFile string
	jaeger               read.JaegerQuery
	victoria             bool // --victorialogs: jaeger holds its endpoint, trace, service, lookback and limit
	timeout              time.Duration
	json                 bool
	html                 string // the HTML report's file, "-" for stdout
	strict               bool   // notes fail the run too
	maxBytes             int64  // size limit of the input
}

// usagef describes a problem with the command line; parse returns only
// such errors, and run adds a pointer to -h.
func usagef(format string, args ...any) error { return fmt.Errorf(format, args...) }

func (c *command) run(args []string) int {
	opts, err := c.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return exitClean
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "retryinspect: %v\nRun 'retryinspect -h' for usage.\n", err)
		return exitError
	}
	spans, source, err := c.load(opts)
	var tooLarge *read.TooLargeError
	if errors.As(err, &tooLarge) {
		err = fmt.Errorf("%w (raise it with --max-bytes)", err)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "retryinspect: %v\n", err)
		return exitError
	}
	report := inspect.Analyze(spans)
	if opts.html != "" {
		if err := c.writeHTML(opts.html, report, source); err != nil {
			fmt.Fprintf(c.stderr, "retryinspect: writing the HTML report: %v\n", err)
			return exitError
		}
	}
	switch {
	case opts.html == "-": // the page is the output
	case opts.json:
		err = render.JSON(c.stdout, report)
	default:
		err = render.Text(c.stdout, report)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "retryinspect: writing the report: %v\n", err)
		return exitError
	}
	if len(report.Findings) > 0 || opts.strict && len(report.Notes) > 0 {
		return exitFindings
	}
	return exitClean
}

func (c *command) parse(args []string) (options, error) {
	var (
		opts     options
		lookback string
		maxBytes = read.FormatBytes(read.DefaultMaxBytes)
	)
	fs := flag.NewFlagSet("retryinspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.stdoutFile, "stdout", "", "read the JSON the stdouttrace exporter writes from `FILE` (- for stdin)")
	fs.StringVar(&opts.otlpFile, "otlp", "", "read OTLP JSON, one ExportTraceServiceRequest per line, from `FILE` (- for stdin)")
	fs.StringVar(&opts.jaeger.Endpoint, "jaeger", "", "query the Jaeger API at `URL`, e.g. http://127.0.0.1:16686")
	var victoria string
	fs.StringVar(&victoria, "victorialogs", "", "query VictoriaLogs (/select/logsql/query) at `URL`, e.g. http://127.0.0.1:9428, for the log events")
	fs.StringVar(&opts.jaeger.Service, "service", "", "with --jaeger or --victorialogs: the service `NAME` whose traces or log events to read")
	fs.StringVar(&opts.jaeger.TraceID, "trace", "", "with --jaeger or --victorialogs: read the single trace `ID` instead")
	fs.StringVar(&lookback, "lookback", "1h", "with --jaeger --service or --victorialogs: the search window ending now (30m, 1h, 2d)")
	fs.IntVar(&opts.jaeger.Limit, "limit", read.DefaultLimit, fmt.Sprintf("with --jaeger --service: the maximum number of traces; with --victorialogs: of log records (default %d)", read.DefaultLogLimit))
	fs.DurationVar(&opts.timeout, "timeout", 10*time.Second, "with --jaeger or --victorialogs: the HTTP request timeout")
	fs.BoolVar(&opts.json, "json", false, "print the report as one JSON document")
	fs.StringVar(&opts.html, "html", "", "also write the report as one self-contained HTML page to `FILE` (- for stdout, instead of the text)")
	fs.BoolVar(&opts.strict, "strict", false, "exit 1 on notes too: absences the contract allows (optional attributes, operation spans)")
	fs.StringVar(&maxBytes, "max-bytes", maxBytes, "refuse an input (file, stdin or Jaeger answer) larger than `SIZE` (KiB, MiB, GiB or bytes)")
	fs.Usage = func() {} // errors are reported by run, help below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stdout, usageHead)
			fs.SetOutput(c.stdout)
			fs.PrintDefaults()
			return opts, err
		}
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	inputs := 0
	for _, name := range []string{"stdout", "otlp", "jaeger", "victorialogs"} {
		if set[name] {
			inputs++
		}
	}
	if inputs != 1 {
		return opts, usagef("give exactly one input: --stdout FILE, --otlp FILE, --jaeger URL or --victorialogs URL")
	}
	if !set["jaeger"] && !set["victorialogs"] {
		for _, name := range []string{"service", "trace", "lookback", "limit", "timeout"} {
			if set[name] {
				return opts, usagef("--%s applies to --jaeger and --victorialogs only", name)
			}
		}
	}
	if (set["stdout"] && opts.stdoutFile == "") || (set["otlp"] && opts.otlpFile == "") {
		return opts, usagef("the input file name is empty")
	}
	switch {
	case set["html"] && opts.html == "":
		return opts, usagef("the --html file name is empty")
	case opts.html == "-" && opts.json:
		return opts, usagef("--html - and --json both write to stdout: give --html a file")
	}
	n, err := read.ParseBytes(maxBytes)
	if err != nil {
		return opts, usagef("--max-bytes: %v", err)
	}
	opts.maxBytes = n
	opts.jaeger.MaxBytes = n
	if set["jaeger"] {
		return opts, c.checkJaeger(&opts, set, lookback)
	}
	if set["victorialogs"] {
		opts.victoria = true
		opts.jaeger.Endpoint = victoria
		if !set["limit"] {
			opts.jaeger.Limit = read.DefaultLogLimit
		}
		return opts, c.checkVictoriaLogs(&opts, set, lookback)
	}
	return opts, nil
}

// checkVictoriaLogs checks the --victorialogs query: a trace, or the
// records of a window (of one service, with --service).
func (c *command) checkVictoriaLogs(opts *options, set map[string]bool, lookback string) error {
	q := &opts.jaeger
	switch {
	case q.TraceID != "" && (set["lookback"] || set["limit"]):
		return usagef("--lookback and --limit apply to searches only, not to --trace")
	case q.TraceID != "":
		if id, ok := model.TraceID(q.TraceID); !ok || id == "" {
			return usagef("--trace %q is not a hex trace id", q.TraceID)
		}
	}
	if err := checkSearch(opts, lookback); err != nil {
		return err
	}
	if _, err := opts.victoriaQuery().URL(); err != nil {
		return usagef("--%v", err)
	}
	return nil
}

// checkSearch checks what a query of a backend shares: the lookback, the
// limit and the timeout.
func checkSearch(opts *options, lookback string) error {
	d, err := read.ParseLookback(lookback)
	if err != nil {
		return usagef("--%v", err)
	}
	opts.jaeger.Lookback = d
	if opts.jaeger.Limit < 1 {
		return usagef("--limit must be positive")
	}
	if opts.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return nil
}

// victoriaQuery is the --victorialogs query.
func (o *options) victoriaQuery() read.VictoriaLogsQuery {
	q := o.jaeger
	return read.VictoriaLogsQuery{Endpoint: q.Endpoint, TraceID: q.TraceID, Service: q.Service,
		Lookback: q.Lookback, Limit: q.Limit, MaxBytes: q.MaxBytes}
}

func (c *command) checkJaeger(opts *options, set map[string]bool, lookback string) error {
	q := &opts.jaeger
	switch {
	case q.TraceID != "" && q.Service != "":
		return usagef("--trace and --service exclude each other")
	case q.TraceID == "" && q.Service == "":
		return usagef("--jaeger needs --service NAME or --trace ID")
	case q.TraceID != "" && (set["lookback"] || set["limit"]):
		return usagef("--lookback and --limit apply to --service searches only")
	}
	if q.TraceID != "" {
		if id, ok := model.TraceID(q.TraceID); !ok || id == "" {
			return usagef("--trace %q is not a hex trace id", q.TraceID)
		}
	}
	if err := checkSearch(opts, lookback); err != nil {
		return err
	}
	if _, err := q.URL(c.now()); err != nil {
		return usagef("--%v", err)
	}
	return nil
}

// load reads the spans from the selected input and says where they came
// from, for the HTML report.
func (c *command) load(opts options) ([]model.Span, string, error) {
	var (
		spans []model.Span
		err   error
		from  string
	)
	switch {
	case opts.stdoutFile != "":
		from = opts.stdoutFile
		spans, err = c.readFile(opts.stdoutFile, opts.maxBytes, read.Stdout)
	case opts.otlpFile != "":
		from = opts.otlpFile
		spans, err = c.readFile(opts.otlpFile, opts.maxBytes, read.OTLP)
	case opts.victoria:
		from = "victorialogs at " + read.RedactEndpoint(opts.jaeger.Endpoint)
		client := &http.Client{Timeout: opts.timeout}
		var full bool
		spans, full, err = read.FetchVictoriaLogs(context.Background(), client, opts.victoriaQuery())
		if full && err == nil {
			fmt.Fprintf(c.stderr, "retryinspect: the answer holds --limit %d log records: more may match, and operations may be cut (raise --limit)\n", opts.jaeger.Limit)
		}
	default:
		from = "jaeger at " + read.RedactEndpoint(opts.jaeger.Endpoint)
		client := &http.Client{Timeout: opts.timeout}
		spans, err = read.FetchJaeger(context.Background(), client, opts.jaeger, c.now())
	}
	source := describeSource(from, opts)
	if err != nil {
		return nil, source, err
	}
	if len(spans) == 0 {
		if opts.victoria {
			return nil, source, fmt.Errorf("no log records in %s", source)
		}
		return nil, source, fmt.Errorf("no spans in %s", source)
	}
	return spans, source, nil
}

// writeHTML writes the HTML report to name, or to stdout for "-".
func (c *command) writeHTML(name string, report *inspect.Report, source string) error {
	o := render.HTMLOptions{Source: source}
	if name == "-" {
		return render.HTML(c.stdout, report, o)
	}
	f, err := os.Create(name)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "open "))
	}
	if err := render.HTML(f, report, o); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func describeSource(from string, opts options) string {
	q := opts.jaeger
	switch {
	case from == "-":
		return "stdin"
	case q.Endpoint == "":
		return from
	case q.TraceID != "":
		return fmt.Sprintf("%s for trace %s", from, q.TraceID)
	case opts.victoria && q.Service == "":
		return fmt.Sprintf("%s in the last %s", from, read.FormatLookback(q.Lookback))
	default:
		return fmt.Sprintf("%s for service %q in the last %s", from, q.Service, read.FormatLookback(q.Lookback))
	}
}

// readFile opens name ("-" for stdin) and decodes at most limit bytes of it.
func (c *command) readFile(name string, limit int64, decode func(io.Reader, string, int64) ([]model.Span, error)) ([]model.Span, error) {
	if name == "-" {
		return decode(c.stdin, "stdin", limit)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "open "))
	}
	defer f.Close()
	return decode(f, name, limit)
}
