// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/htmlreport"
	"github.com/otelretry/otelretry-go/otelretry"
)

type options struct {
	repeat      int
	every       time.Duration
	summaryJSON string
	traces      string
	html        string
	logs        bool
}

func main() {
	var o options
	flag.IntVar(&o.repeat, "repeat", 1, "run the scenario set `N` times")
	flag.DurationVar(&o.every, "every", 0, "with -repeat, start a scenario set every `DURATION` (a service that keeps running, as the dashboards read one);\n"+
		"0 runs them back to back")
	flag.StringVar(&o.summaryJSON, "summary-json", "", "write the machine-readable summary to `FILE`")
	flag.StringVar(&o.traces, "traces", "", "default exporter: write stdouttrace JSON to `FILE` (- for stdout, after the report;\n"+
		"without it, a temporary file removed at exit); unused when OTEL_TRACES_EXPORTER or an OTLP endpoint is set")
	flag.StringVar(&o.html, "html", "", "write retryinspect's HTML report of the spans to `FILE` (without it, a temporary file removed at exit)")
	flag.BoolVar(&o.logs, "log", false, "write one structured log record per attempt (and one for an operation that made none) to stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage of %s:\n", os.Args[0])
		flag.PrintDefaults()
		fmt.Fprintln(flag.CommandLine.Output(), "\nWhere the telemetry goes: the standard OTEL_* environment (OTEL_TRACES_EXPORTER,\n"+
			"OTEL_METRICS_EXPORTER, OTEL_LOGS_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL, ...);\n"+
			"none set: spans as stdouttrace JSON (-traces), metrics in the report, no log events. docs/stack.md gives them all.")
	}
	flag.Parse()
	if flag.NArg() > 0 {
		// A word meant for a flag (summary.json after -summary-json's
		// place) would run the whole demo and write nothing it asked for.
		fmt.Fprintf(os.Stderr, "demo: takes flags only, not %q (see -h)\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.repeat < 1 {
		fmt.Fprintln(os.Stderr, "demo: -repeat must be at least 1")
		os.Exit(2)
	}
	if o.every < 0 {
		fmt.Fprintln(os.Stderr, "demo: -every must not be negative")
		os.Exit(2)
	}
	if o.every > 0 && o.repeat < 2 {
		fmt.Fprintln(os.Stderr, "demo: -every paces the sets of -repeat: give -repeat 2 or more")
		os.Exit(2)
	}
	// An interrupt cancels the run, so that its temporary files are still
	// removed; so does a reader that went away (| head): the writes fail
	// instead of SIGPIPE ending the process before its cleanup.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// runResult is what the caller got back for one operation.
type runResult struct {
	scenario string
	status   int
	err      string
	writes   int
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	// A file the run cannot write is found before it plays, not after.
	for _, out := range [][2]string{{"-html", o.html}, {"-summary-json", o.summaryJSON}} {
		if err := writableTarget(out[1]); err != nil {
			return fmt.Errorf("%s: %w", out[0], err)
		}
	}
	tel, err := newTelemetry(ctx, o.traces, stdout)
	if err != nil {
		return err
	}
	// ctx: after an interrupt between sets, one that reports what ran.
	defer func() { tel.shutdown(ctx) }()

	flaky := newFlakyServer(tel.propagationFields())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: otelhttp.NewHandler(flaky.handler(), serverService, otelhttp.WithTracerProvider(tel.serverTP))}
	go srv.Serve(ln)
	defer srv.Close()

	base := &http.Transport{}
	defer base.CloseIdleConnections()
	env := &environment{
		baseURL:     "http://" + ln.Addr().String(),
		stateClient: &http.Client{Transport: otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tel.tp))},
	}
	var logger *slog.Logger
	if o.logs {
		logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}

	// Each run's operation ids are its own (op-demo-<run>-<repeat>-<scenario>):
	// two runs read together (one Jaeger, one file) stay apart, as an
	// operation id names one operation.
	pl := &player{env: env, tel: tel, flaky: flaky, base: base, logger: logger, runTag: fmt.Sprintf("%08x", rand.Uint32())}
	runs := map[string]runResult{}
	played := pl.playSets(ctx, o, runs)
	interrupted := ctx.Err() != nil
	if interrupted {
		if o.every == 0 {
			return ctx.Err()
		}
		// A demo that keeps running (-every) is stopped so: the sets
		// it played are reported and their telemetry flushed.
		ctx = context.WithoutCancel(ctx)
	}
	return report(ctx, o, stdout, tel, ln.Addr(), flaky.propagationSeen(), runs, setsPlayed{played, o.repeat, interrupted})
}

// setsPlayed is how far a run went: the sets that made at least one
// operation, of those asked for, and whether an interrupt stopped it.
type setsPlayed struct {
	played, asked int
	interrupted   bool
}

// playSets plays the run's scenario sets, -every apart, until they are
// all played or ctx ends; it returns the last set that made an operation.
func (pl *player) playSets(ctx context.Context, o options, runs map[string]runResult) (played int) {
	start := time.Now()
	for rep := 1; rep <= o.repeat && ctx.Err() == nil; rep++ {
		if rep > 1 && waitForSet(ctx, start.Add(time.Duration(rep-1)*o.every)) != nil {
			break
		}
		if pl.playSet(ctx, rep, runs) > 0 {
			played = rep
		}
	}
	return played
}

// writableTarget reports why path, an output file's, cannot be written:
// its directory missing, or a directory in its place ("" is no path); a
// symbolic link is judged by the file it names.
func writableTarget(path string) error {
	if path == "" {
		return nil
	}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return fmt.Errorf("%s names a directory", path)
	}
	path, err := followLinks(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if !dir.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	return nil
}

// followLinks is path as the kernel opens it for writing: its last
// element's links followed (at most 40, as many as Linux follows), each
// link's relative target read from the directory the link is in.
func followLinks(path string) (string, error) {
	for links := 0; ; links++ {
		// The directory as the kernel reaches it: a link's ".." is read
		// after the links before it, not as text.
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, filepath.Base(path))
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		if links == 40 { // as many as Linux follows
			return "", fmt.Errorf("%s: too many links", path)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		path = target
	}
	return path, nil
}

// report prints the run's tables and telemetry, writes its HTML report
// and summary, and flushes its exporters. The report comes first: it is
// read from the in-memory recorder and reader, not from the exporters.
func report(ctx context.Context, o options, stdout io.Writer, tel *telemetry, addr net.Addr, propagation []string, runs map[string]runResult, sets setsPlayed) error {
	s, err := summarize(ctx, tel, readOperations(tel.spans.Ended(), runs))
	if err != nil {
		return err
	}
	var rep *htmlreport.Report // none when the sampler kept no span
	if spans := tel.spans.Ended(); len(spans) > 0 || tel.sampler == "" {
		if rep, err = inspectSpans(ctx, spans); err != nil {
			return err
		}
	}
	s.Propagation = propagation
	s.Sets, s.Repeat, s.Interrupted = sets.played, sets.asked, sets.interrupted
	fmt.Fprintf(stdout, "=== otelretry demo: %d operations against a flaky server on %s; attempt events read back from the spans ===\n",
		len(s.Operations), addr)
	if sets.interrupted {
		fmt.Fprintf(stdout, "interrupted: %d of %d scenario sets played (an operation the interrupt cut ended canceled)\n", sets.played, sets.asked)
	}
	if err := printTables(stdout, s, rep); err != nil {
		return err
	}
	writeTelemetry(stdout, tel, s.Propagation)
	if rep != nil {
		temporary, err := writeHTMLReport(stdout, o.html, rep)
		if temporary != "" {
			defer os.Remove(temporary)
		}
		if err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "  report:  none: the sampler kept no span\n")
	}
	tel.flush(ctx)
	tel.exportToTerminal(ctx)
	if o.summaryJSON != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(o.summaryJSON, append(b, '\n'), 0o644)
	}
	return nil
}

// call runs one operation: the operation id is created here, at the
// operation boundary, before the first call.
func call(ctx context.Context, client *http.Client, baseURL, opID string, sc scenario) runResult {
	res := runResult{scenario: sc.name}
	ctx = otelretry.WithOperationID(ctx, opID)
	var body io.Reader
	if sc.body != "" {
		body = strings.NewReader(sc.body)
	}
	req, err := http.NewRequestWithContext(ctx, sc.method, baseURL+sc.path, body)
	if err != nil {
		res.err = err.Error()
		return res
	}
	req.Header.Set(keyHeader, opID)
	resp, err := client.Do(req)
	if err != nil {
		// Report the outcome, not http.Client's *url.Error text, which
		// would repeat the full URL with its query.
		var rerr *otelretry.Error
		if errors.As(err, &rerr) {
			res.err = string(rerr.Outcome)
			if errors.Is(err, otelretry.ErrOutcomeUnknown) {
				res.err += " (outcome unknown, not resent)"
			}
		} else {
			res.err = "request failed"
		}
		return res
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	res.status = resp.StatusCode
	return res
}

// player plays the scenario sets of one run.
type player struct {
	env    *environment
	tel    *telemetry
	flaky  *flakyServer
	base   http.RoundTripper
	logger *slog.Logger
	runTag string // the run's part of each operation id
}

// playSet plays scenario set rep, each operation through a Transport of
// its own, into runs by operation id, until ctx ends; it returns how many
// operations it made.
func (p *player) playSet(ctx context.Context, rep int, runs map[string]runResult) int {
	n := 0
	for i, sc := range scenarios() {
		if ctx.Err() != nil {
			break
		}
		n++
		opID := fmt.Sprintf("op-demo-%s-%d-%d", p.runTag, rep, i+1)
		opts := append(append(sc.options(p.env), p.tel.retryOptions()...), otelretry.WithLogger(p.logger))
		client := &http.Client{Transport: otelretry.NewTransport(p.base, opts...)}
		r := call(ctx, client, p.env.baseURL, opID, sc)
		if sc.method != http.MethodGet {
			r.writes = p.flaky.posts(opID)
		}
		runs[opID] = r
	}
	return n
}

// waitForSet is waitUntil; a test makes it an interrupt.
var waitForSet = waitUntil

// waitUntil waits until at, or until ctx ends (its error). With -every,
// each scenario set starts at its time, however long the one before took.
func waitUntil(ctx context.Context, at time.Time) error {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
