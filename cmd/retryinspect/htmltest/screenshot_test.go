// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmltest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

var updateDocs = flag.Bool("update-docs", false, "also write the docs' screenshots, docs/retryinspect-report.png (the README's) and docs/retryinspect-storm.png (docs/retryinspect.md's)")

// TestScreenshot renders the demo's own run (its spans, as `go run
// ./examples/demo -traces FILE` writes them) and a storm, and saves what
// the browser shows: each whole page as artifacts/retryinspect-NAME.png
// (untracked, for CI to keep) with the page itself beside it, and with
// -update-docs the top of each page as docs/retryinspect-NAME.png, the
// pictures of the README and of docs/retryinspect.md. The top must show
// the headlines and the whole legend: for the demo, whose slow read is
// hedged, the entries for attempts in flight together, a hedge sent and
// a superseded attempt.
func TestScreenshot(t *testing.T) {
	for _, c := range []struct {
		name, source string
		report       func(t *testing.T) *inspect.Report
		findings     bool // the run has findings (the demo has none)
	}{
		{"report", "the demo's traces.json", demoReport, false},
		{"storm", "traces.json", func(t *testing.T) *inspect.Report { return report(t, storm()...) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.report(t)
			if (len(r.Findings) > 0) != c.findings {
				t.Fatalf("the %s raised %d findings", c.name, len(r.Findings))
			}
			html := pageOf(t, r, c.source)
			p := open(t, html)
			full, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			const width, height, scale = 1200, 1560, 0.85
			if err := chromedp.Do(p.ctx,
				chromedp.EmulateViewport(width, height, chromedp.EmulateScale(scale)),
				chromedp.Evaluate[chromedp.Void](afterPaint, chromedp.EvalAwaitPromise),
			); err != nil {
				t.Fatal(err)
			}
			// What the top of the page shows: the headlines and the legend.
			shown := evalAs[[]string](t, p, `[...document.querySelectorAll('[data-role=headline], [data-role=legend] > span')]
				.filter(e => e.getBoundingClientRect().bottom <= window.innerHeight).map(e => e.textContent.replace(/\s+/g, ' ').trim())`)
			for _, want := range legendOf(c.name) {
				if !slices.Contains(shown, want) {
					t.Errorf("the top of the page does not show %q; it shows %q", want, shown)
				}
			}
			for _, d := range r.Dependencies {
				if !slices.Contains(shown, d.Headline) {
					t.Errorf("the top of the page does not show the headline %q", d.Headline)
				}
			}
			top, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			dir := artifacts(t)
			for name, data := range map[string][]byte{"retryinspect-" + c.name + ".png": full, "retryinspect-" + c.name + ".html": html} {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", path, len(data))
			}
			if *updateDocs {
				path := filepath.Join(dir, "..", "docs", "retryinspect-"+c.name+".png")
				if err := os.WriteFile(path, top, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", path, len(top))
			}
		})
	}
}

// legendOf is the legend a screenshot must show: the hedges' drawings on
// the demo's page, whose slow read is hedged.
func legendOf(name string) []string {
	want := []string{"retries the budget refused", "deadline"}
	if name == "report" {
		want = append(want, "attempts in flight together: an attempt and its hedges", "hedge sent", "superseded: canceled, another attempt won")
	}
	return want
}

// demoReport runs the demo (a module of its own: `go run` in its
// directory, OTEL_* cleared, so that its spans go to the file it is
// given) and reads its spans back as `retryinspect traces.json` does. "go"
// is the test's own toolchain: go test puts its GOROOT/bin first on the
// PATH.
func demoReport(t *testing.T) *inspect.Report {
	t.Helper()
	root := filepath.Dir(artifacts(t))
	traces := filepath.Join(t.TempDir(), "traces.json")
	cmd := exec.CommandContext(t.Context(), "go", "run", ".", "-traces", traces)
	cmd.Dir = filepath.Join(root, "examples", "demo")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OTEL_") }), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the demo: %v\n%s", err, out)
	}
	f, err := os.Open(traces)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := read.Stdout(f, "traces.json", read.DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return inspect.Analyze(spans)
}

// TestScale renders the reports of incidents of 1 000 and 10 000
// operations and logs their size and how long the browser took to load
// and paint them (logged, never asserted: the machine is shared). The page
// must stay under 5 MB and draw at most 200 timelines, which, identical
// operations sharing one, stand for every operation.
func TestScale(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := inspect.Analyze(tracefixture.Storm(n))
			start := time.Now()
			html := pageOf(t, r, fmt.Sprintf("Storm(%d)", n))
			rendered := time.Since(start)
			if len(html) >= 5<<20 {
				t.Errorf("the page of %d operations has %d bytes, want under 5 MiB", n, len(html))
			}
			p := open(t, html)
			res := evalAs[struct {
				Timelines  int    `json:"timelines"`
				Operations int    `json:"operations"`
				Note       string `json:"note"`
				Lanes      int    `json:"lanes"`
				Height     int    `json:"height"`
			}](t, p, `({
				timelines: document.querySelectorAll('[data-role=timeline]').length,
				operations: [...document.querySelectorAll('[data-role=operation]')].reduce((n, a) => n + +a.dataset.count, 0),
				note: document.querySelector('[data-role=ops-note]').textContent,
				lanes: document.querySelectorAll('[data-role=lane]').length,
				height: document.documentElement.scrollHeight,
			})`)
			// Identical operations share a timeline: the storm's fit in
			// fewer than 200, which draw every operation.
			if res.Timelines == 0 || res.Timelines > 200 || res.Operations != n || res.Lanes != 4 ||
				!strings.HasPrefix(res.Note, fmt.Sprintf("%d operations in %d timelines", n, res.Timelines)) {
				t.Errorf("%d timelines for %d operations, %d lanes, note %q", res.Timelines, res.Operations, res.Lanes, res.Note)
			}
			t.Logf("%d operations (%d spans, %d findings) in %d timelines: page %d bytes (%.2f MB), rendered by Go in %s, loaded and painted by Chromium in %s, %d px tall",
				n, r.Spans.Total, len(r.Findings), res.Timelines, len(html), float64(len(html))/1e6, rendered.Round(time.Millisecond), p.took.Round(time.Millisecond), res.Height)
		})
	}
}
