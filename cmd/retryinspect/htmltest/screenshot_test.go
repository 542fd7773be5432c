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

var updateDocs = flag.Bool("update-docs", false, "also write the README's screenshot, docs/retryinspect-report.png")

// TestScreenshot renders a small incident and saves what the browser shows:
// the whole page as artifacts/retryinspect-report.png (untracked, for CI
// to keep) with the page itself beside it, and with -update-docs the top
// of the page as docs/retryinspect-report.png, the README's picture.
func TestScreenshot(t *testing.T) {
	r := report(t, showcase()...)
	if len(r.Findings) == 0 {
		t.Fatal("the showcase raised no finding")
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
	for name, data := range map[string][]byte{"retryinspect-report.png": full, "retryinspect-report.html": html} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(data))
	}
	if *updateDocs {
		path := filepath.Join(dir, "..", "docs", "retryinspect-report.png")
		if err := os.WriteFile(path, top, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(top))
	}
}

// TestScale renders the reports of incidents of 1 000 and 10 000
// operations and logs their size and how long the browser took to load
// and paint them (logged, never asserted: the machine is shared). The page
// must stay under 5 MB, draw at most 200 timelines and say what it left
// out.
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
				Timelines int    `json:"timelines"`
				Note      string `json:"note"`
				LeftOut   string `json:"leftOut"`
				Lanes     int    `json:"lanes"`
				Height    int    `json:"height"`
			}](t, p, `({
				timelines: document.querySelectorAll('[data-role=timeline]').length,
				note: document.querySelector('[data-role=ops-note]').textContent,
				leftOut: (document.querySelector('[data-role=left-out]') || {}).textContent || '',
				lanes: document.querySelectorAll('[data-role=lane]').length,
				height: document.documentElement.scrollHeight,
			})`)
			if res.Timelines != 200 || !strings.Contains(res.Note, fmt.Sprintf("the 200 worst of %d operations", n)) ||
				!strings.Contains(res.LeftOut, fmt.Sprintf("left out: %d operations", n-200)) || res.Lanes != 4 {
				t.Errorf("%d timelines, %d lanes, note %q, left out %q", res.Timelines, res.Lanes, res.Note, res.LeftOut)
			}
			t.Logf("%d operations (%d spans, %d findings): page %d bytes (%.2f MB), rendered by Go in %s, loaded and painted by Chromium in %s, %d px tall",
				n, r.Spans.Total, len(r.Findings), len(html), float64(len(html))/1e6, rendered.Round(time.Millisecond), p.took.Round(time.Millisecond), res.Height)
		})
	}
}
