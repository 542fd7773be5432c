// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// Exit statuses.
const (
	exitClean    = 0 // no findings
	exitFindings = 1 // at least one finding
	exitError    = 2 // usage or input error
)

const usageHead = `Usage:
  retryinspect [flags] FILE...
  retryinspect [flags] -jaeger URL -service NAME
  retryinspect [flags] -jaeger URL -trace ID
  retryinspect [flags] -victorialogs URL [-service NAME]
  retryinspect [flags] -victorialogs URL -trace ID

Reads back the spans of retry operations (this library's or any that
records the retry attempt contract), or the retry.attempt and
retry.operation log events of WithLoggerProvider, from files (stdouttrace
JSON, OTLP JSON lines or Jaeger's saved trace JSON, told apart by their
content; - is standard input), from Jaeger's API or from VictoriaLogs'
query API. Prints each
operation with its attempts in order, a summary, the notes and the
findings. With -html FILE it also writes the report as one self-contained
HTML page (-html - writes the page to standard output instead of the
text). Exits 0 when clean, 1 when there are findings (or notes, with
-strict), 2 on usage or input errors.
`

// flagGroups lists the flags in the order -h prints them, by what they
// do; each flag's default is printed once, by printFlags.
var flagGroups = []struct {
	title string
	names []string
}{
	{"Input (FILE arguments, or one backend)", []string{"format", "max-bytes", "jaeger", "victorialogs", "service", "trace", "lookback", "limit", "timeout"}},
	{"Output", []string{"o", "json", "html", "strict"}},
	{"Deprecated, removed in the next release", []string{"stdout", "otlp"}},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: it parses args, reads the spans, prints the
// report on stdout and returns the exit status. Standard input is read
// only for the file argument "-".
func run(args []string, stdout, stderr io.Writer) int {
	c := &command{stdin: os.Stdin, stdout: stdout, stderr: stderr, now: time.Now}
	return c.run(args)
}

type command struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	now            func() time.Time
	// paths are the files the user named (inputs, -o, -html), longest
	// first: warn prints them as given.
	paths []string
}

// inputFile is a file to read and its format.
type inputFile struct {
	name   string // "-" for stdin
	format read.Format
}

// options are the parsed flags and arguments.
type options struct {
	files    []inputFile
	jaeger   read.JaegerQuery
	victoria bool // -victorialogs: jaeger holds its endpoint, trace, service, lookback and limit
	timeout  time.Duration
	json     bool
	out      string // the text or JSON report's file, "-" for stdout
	html     string // the HTML report's file, "-" for stdout
	strict   bool   // notes fail the run too
	maxBytes int64  // size limit of each input
}

// paths are the files o names, longest first (so that a name holding
// another is set aside whole).
func (o options) paths() []string {
	var names []string
	for _, f := range o.files {
		if f.name != "-" {
			names = append(names, f.name)
		}
	}
	for _, n := range []string{o.out, o.html} {
		if n != "" && n != "-" {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	return names
}

// usagef describes a problem with the command line; parse returns only
// such errors, and run adds a pointer to -h.
func usagef(format string, args ...any) error { return fmt.Errorf(format, args...) }

// warn writes a line on stderr, sanitized and escaped as the report is
// (redact.Text, render.Escape): an error may quote the input, whose text
// could hold a secret, drive the terminal or forge a line. The paths the
// user gave are kept as given (escaped only): redact.Text reads
// "snap-10:30@prod/x.json" as a URL's userinfo.
func (c *command) warn(format string, args ...any) {
	msg := redactAllBut(fmt.Sprintf(format, args...), c.paths)
	fmt.Fprintf(c.stderr, "retryinspect: %s\n", render.Escape(msg))
}

// redactAllBut is redact.Text(msg) with the texts of keep (longest
// first) left as they are where msg names them: at its start or after a
// space or a quote, and before its end, a space, a colon, a comma or a
// quote, as an error names a file. The text between them is redacted
// piece by piece; a URL has no space, so a kept text never splits one.
func redactAllBut(msg string, keep []string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(msg); i++ {
		if i > 0 && msg[i-1] != ' ' && msg[i-1] != '"' {
			continue
		}
		for _, k := range keep {
			end := i + len(k)
			if k == "" || !strings.HasPrefix(msg[i:], k) || end < len(msg) && strings.IndexByte(` :,"`, msg[end]) < 0 {
				continue
			}
			b.WriteString(redact.Text(msg[last:i]))
			b.WriteString(k)
			last, i = end, end-1
			break
		}
	}
	b.WriteString(redact.Text(msg[last:]))
	return b.String()
}

func (c *command) run(args []string) int {
	opts, err := c.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return exitClean
	}
	c.paths = opts.paths()
	if err != nil {
		c.warn("%v", err)
		fmt.Fprintln(c.stderr, "Run 'retryinspect -h' for usage.")
		return exitError
	}
	// An output that cannot be written is found before a backend is
	// asked or an input read.
	for _, out := range [][2]string{{"HTML report", opts.html}, {"report", opts.out}} {
		if out[1] != "" && out[1] != "-" {
			if err := canWrite(out[1]); err != nil {
				c.warn("writing the %s: %v", out[0], err)
				return exitError
			}
		}
	}
	spans, source, err := c.load(opts)
	var tooLarge *read.TooLargeError
	if errors.As(err, &tooLarge) {
		err = fmt.Errorf("%w (raise it with -max-bytes)", err)
	}
	if err != nil {
		c.warn("%v", err)
		return exitError
	}
	report := inspect.Analyze(spans)
	// The page is written first, as before the text report (so a reader
	// that goes away stops the run before a report file is made). A run
	// that then fails removes the files it made and leaves an existing
	// one as it was: each is put in place only when both are written.
	var outs outputs
	failed := func(what string, err error) int {
		outs.discard()
		c.warn("writing the %s: %v", what, err)
		return exitError
	}
	if opts.html != "" {
		if err := outs.write(c.stdout, opts.html, func(w io.Writer) error {
			return render.HTML(w, report, render.HTMLOptions{Source: source})
		}); err != nil {
			return failed("HTML report", err)
		}
	}
	if opts.html != "-" || opts.out != "-" { // else the page is the output
		write := render.Text
		if opts.json {
			write = render.JSON
		}
		if err := outs.write(c.stdout, opts.out, func(w io.Writer) error { return write(w, report) }); err != nil {
			return failed("report", err)
		}
	}
	if err := outs.commit(); err != nil {
		return failed("report", err)
	}
	if len(report.Findings) > 0 || opts.strict && len(report.Notes) > 0 {
		return exitFindings
	}
	return exitClean
}

// deprecatedFlags are the flags of v0.3 kept for one release: each reads
// a file in one format, as a FILE argument with -format does.
var deprecatedFlags = []struct {
	name   string
	format read.Format
	usage  string
}{
	{"stdout", read.FormatStdouttrace, "read the JSON the stdouttrace exporter writes from `FILE` (- for stdin): give FILE as an argument instead"},
	{"otlp", read.FormatOTLP, "read OTLP JSON lines, traces or logs, from `FILE` (- for stdin): give FILE as an argument instead"},
}

// rawFlags are the flags parse reads as given, before it checks them.
type rawFlags struct {
	lookback, format, maxBytes, victoria string
	named                                []inputFile // by the deprecated flags
}

func (c *command) parse(args []string) (options, error) {
	var opts options
	raw := rawFlags{format: string(read.FormatAuto), maxBytes: read.FormatBytes(read.DefaultMaxBytes)}
	fs := c.flagSet(&opts, &raw)
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.stdout, usageHead)
		printFlags(c.stdout, fs)
		return opts, err
	}
	if err != nil {
		return opts, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := opts.takeInputs(files, &raw, set); err != nil {
		return opts, err
	}
	if err := opts.takeOutputs(set); err != nil {
		return opts, err
	}
	n, err := read.ParseBytes(raw.maxBytes)
	if err != nil {
		return opts, usagef("-max-bytes: %v", err)
	}
	opts.maxBytes = n
	opts.jaeger.MaxBytes = n
	if set["limit"] && opts.jaeger.Limit < 1 {
		return opts, usagef("-limit must be positive")
	}
	return opts, c.takeBackend(&opts, &raw, set)
}

// flagSet is the command's flags, read into opts and raw.
func (c *command) flagSet(opts *options, raw *rawFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("retryinspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&raw.format, "format", raw.format, "the `FORMAT` of the FILE arguments: auto (told from the content), stdouttrace, otlp or jaeger (an answer of Jaeger's /api/traces, as the Jaeger UI saves a trace, or /api/v3)")
	fs.StringVar(&raw.maxBytes, "max-bytes", raw.maxBytes, "refuse an input (a file, stdin or one answer of a backend) larger than `SIZE` (KiB, MiB, GiB or bytes)")
	fs.StringVar(&opts.jaeger.Endpoint, "jaeger", "", "query the Jaeger API at `URL`, e.g. http://127.0.0.1:16686")
	fs.StringVar(&raw.victoria, "victorialogs", "", "query VictoriaLogs (/select/logsql/query) at `URL`, e.g. http://127.0.0.1:9428, for the log events")
	fs.StringVar(&opts.jaeger.Service, "service", "", "with -jaeger or -victorialogs: the service `NAME` whose traces or log events to read")
	fs.StringVar(&opts.jaeger.TraceID, "trace", "", "with -jaeger or -victorialogs: read the single trace `ID` instead")
	fs.StringVar(&raw.lookback, "lookback", "1h", "with -jaeger -service or -victorialogs: the search `WINDOW` ending now (30m, 1h, 2d)")
	fs.IntVar(&opts.jaeger.Limit, "limit", 0, fmt.Sprintf("with -jaeger -service: read at most `N` traces; with -victorialogs: at most N log records (default %d traces, %d records)", read.DefaultLimit, read.DefaultLogLimit))
	fs.DurationVar(&opts.timeout, "timeout", 10*time.Second, "with -jaeger or -victorialogs: the HTTP request timeout")
	fs.StringVar(&opts.out, "o", "", "write the text (or -json) report to `FILE` instead of stdout")
	fs.BoolVar(&opts.json, "json", false, "write the report as one JSON document")
	fs.StringVar(&opts.html, "html", "", "also write the report as one self-contained HTML page to `FILE` (- for stdout, instead of the text)")
	fs.BoolVar(&opts.strict, "strict", false, "exit 1 on notes too: absences the contract allows (optional attributes, operation spans)")
	warned := map[string]bool{}
	for _, d := range deprecatedFlags {
		fs.Func(d.name, d.usage, func(name string) error {
			if !warned[d.name] {
				warned[d.name] = true
				c.warn("-%s FILE is deprecated and will be removed in the next release: give the file as an argument (retryinspect FILE)", d.name)
			}
			raw.named = append(raw.named, inputFile{name, d.format})
			return nil
		})
	}
	fs.Usage = func() {} // errors are reported by run, help above
	return fs
}

// takeInputs checks the inputs given (files, the FILE arguments; set, the
// flags given): exactly one kind, standard input at most once, and the
// flags of a kind only with it.
func (opts *options) takeInputs(files []string, raw *rawFlags, set map[string]bool) error {
	if !slices.Contains(read.Formats(), read.Format(raw.format)) {
		return usagef("-format %q: want one of %v", raw.format, read.Formats())
	}
	for _, name := range files {
		opts.files = append(opts.files, inputFile{name, read.Format(raw.format)})
	}
	opts.files = append(opts.files, raw.named...)
	inputs := 0
	for _, given := range []bool{len(opts.files) > 0, set["jaeger"], set["victorialogs"]} {
		if given {
			inputs++
		}
	}
	if inputs != 1 {
		return usagef("give one input: FILE arguments, -jaeger URL or -victorialogs URL")
	}
	stdin := 0
	for _, f := range opts.files {
		switch {
		case f.name == "":
			return usagef("the input file name is empty")
		case f.name == "-":
			stdin++
		}
	}
	if stdin > 1 {
		return usagef("standard input (-) can be read once")
	}
	if set["format"] && len(files) == 0 {
		return usagef("-format applies to FILE arguments only")
	}
	if !set["jaeger"] && !set["victorialogs"] {
		for _, name := range []string{"service", "trace", "lookback", "limit", "timeout"} {
			if set[name] {
				return usagef("-%s applies to -jaeger and -victorialogs only", name)
			}
		}
	}
	return nil
}

// takeOutputs checks the outputs: named when given, never one file or
// stream twice, never an input; the report to stdout by default.
func (opts *options) takeOutputs(set map[string]bool) error {
	switch {
	case opts.html == "" && set["html"]:
		return usagef("the -html file name is empty")
	case opts.out == "" && set["o"]:
		return usagef("the -o file name is empty")
	case opts.out == "":
		opts.out = "-"
	}
	if opts.html == "-" && opts.out == "-" && opts.json {
		return usagef("-html - and -json both write to stdout: give -html or -o a file")
	}
	return checkOutputs(*opts)
}

// takeBackend checks the backend's flags, when a backend is the input,
// and sets its default limit.
func (c *command) takeBackend(opts *options, raw *rawFlags, set map[string]bool) error {
	switch {
	case set["jaeger"]:
		if !set["limit"] {
			opts.jaeger.Limit = read.DefaultLimit
		}
		return c.checkJaeger(opts, set, raw.lookback)
	case set["victorialogs"]:
		opts.victoria = true
		opts.jaeger.Endpoint = raw.victoria
		if !set["limit"] {
			opts.jaeger.Limit = read.DefaultLogLimit
		}
		return c.checkVictoriaLogs(opts, set, raw.lookback)
	}
	return nil
}

// checkOutputs refuses an output file that another output or an input
// also names, however spelled: the second write would replace the first,
// and a report written over its input leaves no trace to read again.
func checkOutputs(opts options) error {
	html, report := outputEnd(opts.html), outputEnd(opts.out)
	switch {
	case html.std && report.std && (opts.html != "-" || opts.out != "-"): // "-html -" alone: the page is the output
		return usagef("-html %s and the report both write to stdout: give -html or -o a file", opts.html)
	case opts.html != "" && !(html.std && report.std) && sameStream(html, report):
		return usagef("-html %s and the report reach one stream (%s): give -html or -o a file", opts.html, opts.out)
	case opts.html != "" && !(html.std && report.std) && sameEnd(html, report):
		return usagef("-html and -o name the same file %q", opts.out)
	}
	for _, output := range []struct {
		flag string
		end  end
	}{{"-html", html}, {"-o", report}} {
		if output.end.name == "" {
			continue
		}
		for _, in := range opts.files {
			if sameEnd(output.end, inputEnd(in.name)) {
				return usagef("%s names the input file %q: the report would replace the trace", output.flag, in.name)
			}
		}
	}
	return checkInputs(opts.files)
}

// checkInputs refuses an input named twice, however spelled: read twice,
// every span would look delivered twice.
func checkInputs(files []inputFile) error {
	for i, in := range files {
		for _, again := range files[i+1:] {
			if sameEnd(inputEnd(in.name), inputEnd(again.name)) {
				return usagef("%q and %q name the same input file", in.name, again.name)
			}
		}
	}
	return nil
}

// end is a file the command reads or writes: by its name, or, for a name
// of a standard stream (see stdinNames), that stream.
type end struct {
	name   string
	std    bool
	stream *os.File
}

func inputEnd(name string) end {
	return end{name: name, std: slices.Contains(stdinNames, name), stream: os.Stdin}
}

func outputEnd(name string) end {
	return end{name: name, std: slices.Contains(stdoutNames, name), stream: os.Stdout}
}

func (e end) stat() (os.FileInfo, error) {
	if e.std {
		return e.stream.Stat()
	}
	return os.Stat(e.name)
}

// sameStream tells whether two outputs reach one pipe or terminal (stdout
// spelled otherwise, a link to it), where they would interleave.
func sameStream(a, b end) bool {
	ai, errA := a.stat()
	bi, errB := b.stat()
	stream := os.ModeNamedPipe | os.ModeCharDevice
	return errA == nil && errB == nil && ai.Mode()&stream != 0 && bi.Mode()&stream != 0 && os.SameFile(ai, bi)
}

// sameEnd tells whether a and b reach one file: one stream; a stream and
// the regular file it was redirected to or from; else as sameFile tells.
func sameEnd(a, b end) bool {
	if a.std && b.std && a.stream == b.stream {
		return true
	}
	ai, errA := a.stat()
	bi, errB := b.stat()
	if errA == nil && errB == nil && ai.Mode().IsRegular() && bi.Mode().IsRegular() {
		return os.SameFile(ai, bi)
	}
	return !a.std && !b.std && sameFile(a.name, b.name)
}

// sameFile tells whether two names reach one file: by the file system when
// both are regular files (a link, another spelling of the path), else by
// their paths with every link followed (an output not written yet, a
// dangling link to one, a linked directory). Devices and pipes are compared
// by name only: /dev/stdin and /dev/stdout may be one terminal.
func sameFile(a, b string) bool {
	ai, errA := os.Stat(a)
	bi, errB := os.Stat(b)
	if errA == nil && errB == nil && ai.Mode().IsRegular() && bi.Mode().IsRegular() {
		return os.SameFile(ai, bi)
	}
	if errA == nil && !ai.Mode().IsRegular() || errB == nil && !bi.Mode().IsRegular() {
		absA, errA := filepath.Abs(a)
		absB, errB := filepath.Abs(b)
		return errA == nil && errB == nil && absA == absB
	}
	return resolvedPath(a) == resolvedPath(b)
}

// resolvedPath is name's absolute path with every link followed, also for
// a file not written yet: a dangling link leads to the name it holds, and
// the directory of a name that does not exist is resolved. Nothing is
// cleaned before the links are followed: ".." after a link is the parent
// of what it links to.
func resolvedPath(name string) string {
	p := name
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(name)
		}
		p = wd + string(filepath.Separator) + p
	}
	for range 40 { // as many links as Linux follows in one path
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		target, err := os.Readlink(p)
		if err != nil {
			break // not a link: a file not written yet
		}
		if !filepath.IsAbs(target) {
			target = p[:strings.LastIndexByte(p, filepath.Separator)+1] + target
		}
		p = target
	}
	dir, base := p[:strings.LastIndexByte(p, filepath.Separator)+1], p[strings.LastIndexByte(p, filepath.Separator)+1:]
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base)
	}
	return filepath.Clean(p)
}

// stdinNames and stdoutNames are the paths that name the standard streams
// on Linux, which "-" names as an input and as an output.
var (
	stdinNames  = []string{"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0"}
	stdoutNames = []string{"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/thread-self/fd/1"}
)

// parseInterspersed parses args with fs, flags before and between the
// FILE arguments (retryinspect traces.json -html report.html), and
// returns the arguments; after "--" every argument is a file.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if endedByTerminator(fs, args[:len(args)-len(rest)]) {
			return append(files, rest...), nil
		}
		files, args = append(files, rest[0]), rest[1:]
	}
}

// endedByTerminator reports whether the flags fs parsed, parsed, ended
// with the argument "--" (not a flag's value, as in -o --).
func endedByTerminator(fs *flag.FlagSet, parsed []string) bool {
	for i := 0; i < len(parsed); i++ {
		arg := parsed[i]
		if arg == "--" {
			return true
		}
		name := strings.TrimLeft(arg, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++ // its value
			}
		}
	}
	return false
}

// printFlags prints the flags by group, as flag.PrintDefaults would, each
// default once.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	for _, g := range flagGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			f := fs.Lookup(name)
			typ, usage := flag.UnquoteUsage(f)
			line := "  -" + f.Name
			if typ != "" {
				line += " " + typ
			}
			line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
			switch f.DefValue {
			case "", "0", "false", "0s":
			default:
				line += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// checkVictoriaLogs checks the -victorialogs query: a trace, or the
// records of a window (of one service, with -service).
func (c *command) checkVictoriaLogs(opts *options, set map[string]bool, lookback string) error {
	q := &opts.jaeger
	switch {
	case set["service"] && q.Service == "":
		// An unset shell variable: without -service, every service's.
		return usagef("-service needs a NAME (leave it out to read every service's records)")
	case q.TraceID != "" && set["lookback"]:
		return usagef("-lookback applies to searches only, not to -trace")
	case q.TraceID != "":
		if id, ok := model.TraceID(q.TraceID); !ok || id == "" {
			return usagef("-trace %q is not a hex trace id", q.TraceID)
		}
	}
	if err := checkSearch(opts, lookback); err != nil {
		return err
	}
	if _, err := opts.victoriaQuery().URL(); err != nil {
		return usagef("-%v", err)
	}
	return nil
}

// checkSearch checks what a query of a backend shares: the lookback, the
// limit and the timeout.
func checkSearch(opts *options, lookback string) error {
	d, err := read.ParseLookback(lookback)
	if err != nil {
		return usagef("-%v", err)
	}
	opts.jaeger.Lookback = d
	if opts.jaeger.Limit < 1 {
		return usagef("-limit must be positive")
	}
	if opts.timeout <= 0 {
		return usagef("-timeout must be positive")
	}
	return nil
}

// victoriaQuery is the -victorialogs query.
func (o *options) victoriaQuery() read.VictoriaLogsQuery {
	q := o.jaeger
	return read.VictoriaLogsQuery{Endpoint: q.Endpoint, TraceID: q.TraceID, Service: q.Service,
		Lookback: q.Lookback, Limit: q.Limit, MaxBytes: q.MaxBytes}
}

func (c *command) checkJaeger(opts *options, set map[string]bool, lookback string) error {
	q := &opts.jaeger
	switch {
	case q.TraceID != "" && q.Service != "":
		return usagef("-trace and -service exclude each other")
	case q.TraceID == "" && q.Service == "":
		return usagef("-jaeger needs -service NAME or -trace ID")
	case q.TraceID != "" && (set["lookback"] || set["limit"]):
		return usagef("-lookback and -limit apply to -service searches only")
	}
	if q.TraceID != "" {
		if id, ok := model.TraceID(q.TraceID); !ok || id == "" {
			return usagef("-trace %q is not a hex trace id", q.TraceID)
		}
	}
	if err := checkSearch(opts, lookback); err != nil {
		return err
	}
	if _, err := q.URL(c.now()); err != nil {
		return usagef("-%v", err)
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
	case len(opts.files) > 0:
		names := make([]string, len(opts.files))
		for i, f := range opts.files {
			names[i] = displayName(f.name)
		}
		from = strings.Join(names, ", ")
		spans, err = c.readFiles(opts.files, opts.maxBytes)
	case opts.victoria:
		from = "victorialogs at " + read.RedactEndpoint(opts.jaeger.Endpoint)
		client := &http.Client{Timeout: opts.timeout}
		var full bool
		spans, full, err = read.FetchVictoriaLogs(context.Background(), client, opts.victoriaQuery())
		if full && err == nil {
			c.warn("the answer holds -limit %d log records: more may match, and operations may be cut (raise -limit)", opts.jaeger.Limit)
		}
	default:
		from = "jaeger at " + read.RedactEndpoint(opts.jaeger.Endpoint)
		client := &http.Client{Timeout: opts.timeout}
		spans, err = read.FetchJaeger(context.Background(), client, opts.jaeger, c.now())
		if n := traceCount(spans); opts.jaeger.TraceID == "" && n >= opts.jaeger.Limit && err == nil {
			c.warn("the answer holds -limit %d traces: more may match (raise -limit)", n)
		}
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

// traceCount is how many traces spans belong to.
func traceCount(spans []model.Span) int {
	seen := map[string]bool{}
	for _, s := range spans {
		seen[s.TraceID] = true
	}
	return len(seen)
}

// readFiles reads every file, each in its format. The files hold spans or
// log records, not both: the two describe the same operations.
func (c *command) readFiles(files []inputFile, limit int64) ([]model.Span, error) {
	var (
		all                []model.Span
		withSpans, withLog string // a file of each kind
	)
	for _, f := range files {
		spans, err := c.readFile(f, limit)
		if err != nil {
			return nil, err
		}
		if len(spans) > 0 && spans[0].Log {
			withLog = displayName(f.name)
		} else if len(spans) > 0 {
			withSpans = displayName(f.name)
		}
		if withLog != "" && withSpans != "" {
			return nil, fmt.Errorf("%s holds log records and %s spans: give the files of one or the other (both describe the same operations)", withLog, withSpans)
		}
		all = append(all, spans...)
	}
	return all, nil
}

// readFile opens f ("-" for stdin) and decodes at most limit bytes of it.
func (c *command) readFile(f inputFile, limit int64) ([]model.Span, error) {
	if f.name == "-" {
		spans, _, err := read.File(c.stdin, displayName(f.name), f.format, limit)
		return spans, err
	}
	file, err := os.Open(f.name)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "open "))
	}
	defer file.Close()
	spans, _, err := read.File(file, f.name, f.format, limit)
	return spans, err
}

// displayName names an input file in messages: "stdin" for "-".
func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// canWrite reports whether name can be written, leaving it as it was: a
// file it had to make is removed at once, an existing regular file is
// opened without truncating it, and anything else (a device, a pipe,
// which an open may block on or consume) is left to the write itself; a
// directory is refused.
func canWrite(name string) error {
	fi, statErr := os.Stat(name)
	if statErr == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory", name)
	}
	if statErr == nil && !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "open "))
	}
	f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		if made, err := filepath.EvalSymlinks(name); err == nil {
			os.Remove(made)
		}
	}
	return nil
}

// outputs are the files a run writes. An existing regular file is
// written beside itself under a temporary name and put in its place by
// commit, once every output is written, so a failed run leaves it as it
// was; anything else (a new file, a device, a pipe, stdout) is written in
// place, and a new file is removed by discard.
type outputs struct {
	made    []string    // files the run made in place
	pending [][2]string // temporary file, the file it replaces
}

// write calls write with the file name (stdout for "-").
func (o *outputs) write(stdout io.Writer, name string, write func(io.Writer) error) error {
	if name == "-" {
		return write(stdout)
	}
	if target, err := filepath.EvalSymlinks(name); err == nil {
		if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
			if f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*"); err == nil {
				return o.replace(f, target, fi.Mode().Perm(), write)
			}
			// A directory the run cannot write in: the file is
			// written in place, as it can be.
		}
	}
	_, statErr := os.Stat(name)
	f, err := os.Create(name)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "open "))
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// Through a link that pointed at nothing, the file it points at
		// now is the one made, never the link.
		if made, err := filepath.EvalSymlinks(name); err == nil {
			o.made = append(o.made, made)
		}
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replace writes the regular file target's new content to f, a
// temporary file beside it, with target's permissions, for commit to put
// in place.
func (o *outputs) replace(f *os.File, target string, perm fs.FileMode, write func(io.Writer) error) error {
	o.pending = append(o.pending, [2]string{f.Name(), target})
	err := write(f)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	return err
}

// commit puts each replacement in place.
func (o *outputs) commit() error {
	for len(o.pending) > 0 {
		p := o.pending[0]
		if err := os.Rename(p[0], p[1]); err != nil {
			return err
		}
		o.pending = o.pending[1:]
	}
	return nil
}

// discard removes the files made and the replacements not put in place.
func (o *outputs) discard() {
	for _, name := range o.made {
		os.Remove(name)
	}
	for _, p := range o.pending {
		os.Remove(p[0])
	}
}

func describeSource(from string, opts options) string {
	q := opts.jaeger
	switch {
	case len(opts.files) > 0 || q.Endpoint == "":
		return from
	case q.TraceID != "" && q.Service != "": // -victorialogs takes both
		return fmt.Sprintf("%s for trace %s of service %q", from, q.TraceID, q.Service)
	case q.TraceID != "":
		return fmt.Sprintf("%s for trace %s", from, q.TraceID)
	case opts.victoria && q.Service == "":
		return fmt.Sprintf("%s in the last %s", from, read.FormatLookback(q.Lookback))
	default:
		return fmt.Sprintf("%s for service %q in the last %s", from, q.Service, read.FormatLookback(q.Lookback))
	}
}
