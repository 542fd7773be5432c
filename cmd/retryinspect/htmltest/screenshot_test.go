// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmltest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

var updateDocs = flag.Bool("update-docs", false, "also write the docs' screenshots, docs/retryinspect-report.png (the README's) and docs/retryinspect-storm.png (docs/retryinspect.md's)")

// TestScreenshot renders a small incident (the showcase) and a storm and
// saves what the browser shows: each whole page as
// artifacts/retryinspect-NAME.png (untracked, for CI to keep) with the
// page itself beside it, and with -update-docs the top of each page as
// docs/retryinspect-NAME.png, the pictures of the README and of
// docs/retryinspect.md.
func TestScreenshot(t *testing.T) {
	for _, c := range []struct {
		name  string
		roots func() []tracefixture.Span
	}{{"report", showcase}, {"storm", storm}} {
		t.Run(c.name, func(t *testing.T) {
			r := report(t, c.roots()...)
			if len(r.Findings) == 0 {
				t.Fatalf("the %s raised no finding", c.name)
			}
			html := pageOf(t, r, "traces.json")
			p := open(t, html)
			full, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(p.ctx,
				chromedp.EmulateViewport(1200, 1560, chromedp.EmulateScale(0.85)),
				chromedp.Evaluate[chromedp.Void](afterPaint, chromedp.EvalAwaitPromise),
			); err != nil {
				t.Fatal(err)
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
