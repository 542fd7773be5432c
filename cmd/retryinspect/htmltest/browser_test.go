// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/otelretry/otelretry-go/attrs"
)

// One headless Chromium serves every test, a fresh tab each.
var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserErr    error
	stopBrowser   = func() {}
	browserTmpDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopBrowser()
	if browserTmpDir != "" {
		os.RemoveAll(browserTmpDir)
	}
	os.Exit(code)
}

// inCI reports whether the tests run in CI, where a missing browser is a
// failure, not a reason to skip.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// errNoChromium says the browser cannot be found.
var errNoChromium = errors.New("no Chromium: install Debian's chromium (apt-get install chromium; scripts/test.sh does) or set RETRYINSPECT_CHROMIUM to the browser's path")

// findChromium returns the browser binary: RETRYINSPECT_CHROMIUM, or the
// first of Debian's and other distributions' names on the PATH.
func findChromium() (string, error) {
	if p := os.Getenv("RETRYINSPECT_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("RETRYINSPECT_CHROMIUM: %w", err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errNoChromium
}

func startBrowser() {
	path, err := findChromium()
	if err != nil {
		browserErr = err
		return
	}
	browserTmpDir, err = os.MkdirTemp("", "retryinspect-htmltest-")
	if err != nil {
		browserErr = err
		return
	}
	// As root, without a GPU, on a closed network: no sandbox, no
	// background connections, a profile of its own.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(browserTmpDir),
		chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		browserErr = fmt.Errorf("starting %s: %w", path, err)
		return
	}
	browserCtx = ctx
	stopBrowser = func() { cancelCtx(); cancelAlloc() }
}

// tab opens a new tab of the shared browser; it skips the test without a
// browser, or fails it in CI.
func tab(t *testing.T) context.Context {
	t.Helper()
	browserOnce.Do(startBrowser)
	if browserErr != nil {
		if inCI() {
			t.Fatalf("CI=true and the browser tests cannot run: %v", browserErr)
		}
		t.Skipf("skipping the browser test: %v (with CI=true this fails)", browserErr)
	}
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// loaded is a report page open in a tab.
type loaded struct {
	ctx  context.Context
	url  string
	took time.Duration // from navigating to the second frame painted

	mu       sync.Mutex
	requests []string // every request the tab made, the page's own included
}

// recordViolations collects the page's Content Security Policy
// violations: a blocked request would show there, not in the network log.
const recordViolations = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`

// afterPaint resolves once the page has been laid out and painted twice.
const afterPaint = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`

// open serves html from a loopback server, loads it in a new tab with
// every request intercepted (only the page itself is let through), and
// waits until it is painted. At the end of the test it checks that the
// page made no request of its own.
func open(t *testing.T, html []byte) *loaded {
	t.Helper()
	ctx := tab(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/report.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(html)
	}))
	t.Cleanup(srv.Close)
	p := &loaded{ctx: ctx, url: srv.URL + "/report.html"}
	// The tab, opened, records every request it sends; the fetch domain
	// pauses each: the page goes on, anything else fails.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			p.mu.Lock()
			p.requests = append(p.requests, e.Request.URL)
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		for e, err := range paused {
			if err != nil {
				return
			}
			if e.Request.URL == p.url {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			} else {
				_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}
		}
	}()
	steps := []func() error{
		func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err },
		func() error {
			_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
			return err
		},
		func() error {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordViolations})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("preparing the tab: %v", err)
		}
	}
	start := time.Now()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(p.url),
		chromedp.Evaluate[chromedp.Void](afterPaint, chromedp.EvalAwaitPromise),
	); err != nil {
		t.Fatalf("loading the report: %v", err)
	}
	p.took = time.Since(start)
	t.Cleanup(func() { p.checkSelfContained(t) })
	return p
}

// checkSelfContained: the tab requested nothing but the page, no policy
// violation was reported, and no element could load anything.
func (p *loaded) checkSelfContained(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var others []string
	for _, u := range p.requests {
		if u != p.url {
			others = append(others, u)
		}
	}
	if len(others) > 0 || len(p.requests) == 0 {
		t.Errorf("the tab requested %v; want only the page %s", p.requests, p.url)
	}
	res := evalAs[struct {
		Violations []string `json:"violations"`
		Loaders    int      `json:"loaders"`
		Links      []string `json:"links"`
	}](t, p, `({
		violations: window.__cspViolations || ['(the recorder did not run)'],
		loaders: document.querySelectorAll('script, link:not([rel=icon][href="data:,"]), img, image, iframe, frame, object, embed, video, audio, source, use, [src], [srcset], [background]').length,
		links: [...document.querySelectorAll('[href]:not(link[rel=icon][href="data:,"])')].map(e => e.getAttribute('href')).filter(h => !h.startsWith('#')),
	})`)
	if len(res.Violations) > 0 || res.Loaders > 0 || len(res.Links) > 0 {
		t.Errorf("the page is not self-contained: policy violations %v, %d loading elements, links %v", res.Violations, res.Loaders, res.Links)
	}
}

// evalAs evaluates js in the page and decodes its value into a T.
func evalAs[T any](t *testing.T, p *loaded, js string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// opView is what the tab shows of one operation's timeline, in CSS pixels
// of the page.
type opView struct {
	Found     bool     `json:"found"`
	Title     string   `json:"title"`
	Outcome   string   `json:"outcome"`
	Bars      []box    `json:"bars"`
	Decisions []string `json:"decisions"`
	Labels    []string `json:"labels"`
	Left      []string `json:"left"`
	Pauses    []string `json:"pauses"`
	Deadline  *box     `json:"deadline"`
	Cut       *struct {
		Line  box    `json:"line"`
		Left  box    `json:"left"`
		Pause *box   `json:"pause"`
		Label string `json:"label"`
	} `json:"cut"`
	Findings []string `json:"findings"`
}

type box struct {
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
	Top    float64 `json:"top"`
	Bottom float64 `json:"bottom"`
}

// viewOf reads the timeline of the operation whose title starts with id.
func (p *loaded) viewOf(t *testing.T, id string) opView {
	t.Helper()
	v := evalAs[opView](t, p, `(() => {
		const id = `+jsString(id)+`;
		const art = [...document.querySelectorAll('article[data-role=operation]')]
			.find(a => a.querySelector('.opid').textContent.startsWith(id + '  '));
		if (!art) return {found: false};
		const rect = e => { if (!e) return null; const r = e.getBoundingClientRect();
			return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
		const all = s => [...art.querySelectorAll(s)];
		const cut = art.querySelector('[data-role=cut]');
		return {
			found: true,
			title: art.querySelector('.opid').textContent,
			outcome: art.querySelector('.outcome').textContent,
			bars: all('[data-role=attempt-bar]').map(rect),
			decisions: all('[data-role=attempt]').map(g => g.dataset.decision),
			labels: all('[data-role=attempt-label]').map(e => e.textContent),
			left: all('[data-role=left]').map(e => e.textContent),
			pauses: all('[data-role=pause] + text').map(e => e.textContent),
			deadline: rect(art.querySelector('[data-role=deadline]')),
			cut: cut && {
				line: rect(cut.querySelector('[data-role=cut-line]')),
				left: rect(cut.querySelector('[data-role=cut-left]')),
				pause: rect(cut.querySelector('[data-role=cut-pause]')),
				label: cut.querySelector('[data-role=cut-label]').textContent,
			},
			findings: all('.badge').map(e => e.textContent),
		};
	})()`)
	if !v.Found {
		t.Fatalf("no timeline of %s on the page", id)
	}
	return v
}

// jsString quotes s for a script.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// TestContractReadTimeline: the contract's fixed read renders three
// attempt bars in order, left to right and top to bottom, with the pauses
// between them, the time left before each call (400, 280, 160 ms), the
// decisions retry, retry, return, and the deadline line to the right of
// the last bar.
func TestContractReadTimeline(t *testing.T) {
	p := open(t, pageOf(t, report(t, readTimeline(0).span()), "contract read"))
	v := p.viewOf(t, "op-read")
	if len(v.Bars) != 3 {
		t.Fatalf("%d attempt bars, want 3: %+v", len(v.Bars), v)
	}
	for i := 1; i < 3; i++ {
		if !(v.Bars[i].Left > v.Bars[i-1].Right && v.Bars[i].Top > v.Bars[i-1].Top) {
			t.Errorf("bar %d at %+v does not follow bar %d at %+v", i+1, v.Bars[i], i, v.Bars[i-1])
		}
	}
	for i, b := range v.Bars {
		if b.Right-b.Left < 20 || b.Left < 0 || b.Right > 1200 {
			t.Errorf("bar %d is not drawn on the page: %+v", i+1, b)
		}
	}
	// 80 ms, 80 ms, 50 ms: the bars' widths keep the proportions.
	if w0, w2 := v.Bars[0].Right-v.Bars[0].Left, v.Bars[2].Right-v.Bars[2].Left; w2/w0 < 0.55 || w2/w0 > 0.7 {
		t.Errorf("bar widths %.1f and %.1f are not 80:50", w0, w2)
	}
	check(t, "decisions", v.Decisions, []string{"retry", "retry", "return"})
	check(t, "time left", v.Left, []string{"400 ms left", "280 ms left", "160 ms left"})
	check(t, "labels", v.Labels, []string{"503 · retry · retryable_status", "503 · retry · retryable_status", "200 · return · response"})
	check(t, "pauses", v.Pauses, []string{"pause 40 ms", "pause 40 ms"})
	if v.Deadline == nil || v.Deadline.Left <= v.Bars[2].Right {
		t.Errorf("the deadline line %+v is not to the right of the last bar %+v", v.Deadline, v.Bars[2])
	}
	if v.Cut != nil || v.Outcome != "outcome return" || len(v.Findings) != 0 {
		t.Errorf("outcome %q, cut %+v, findings %v; want return, no cut, no finding", v.Outcome, v.Cut, v.Findings)
	}
}

// TestContractWriteTimeout: the POST timeout renders one bar, timeout,
// deciding check_state: no second call.
func TestContractWriteTimeout(t *testing.T) {
	p := open(t, pageOf(t, report(t, writeTimeout(0).span()), "contract write"))
	v := p.viewOf(t, "op-write")
	if len(v.Bars) != 1 {
		t.Fatalf("%d attempt bars, want 1", len(v.Bars))
	}
	check(t, "decisions", v.Decisions, []string{"check_state"})
	check(t, "labels", v.Labels, []string{"timeout · check_state · unknown_write"})
	if v.Outcome != "outcome check_state" || v.Cut != nil {
		t.Errorf("outcome %q, cut %+v", v.Outcome, v.Cut)
	}
	if v.Deadline == nil || v.Deadline.Left <= v.Bars[0].Right {
		t.Errorf("the deadline line %+v is not to the right of the bar %+v", v.Deadline, v.Bars[0])
	}
}

// TestDeadlineCut: an operation the deadline stopped shows the cut: the
// time left after its last call, hatched up to the deadline line, and the
// backoff that would have followed, crossing it.
func TestDeadlineCut(t *testing.T) {
	p := open(t, pageOf(t, report(t, deadlineCut(0).span()), "deadline"))
	v := p.viewOf(t, "op-slow")
	if len(v.Bars) != 2 || v.Cut == nil || v.Deadline == nil {
		t.Fatalf("bars %d, cut %+v, deadline %+v; want 2 bars, a cut and a deadline", len(v.Bars), v.Cut, v.Deadline)
	}
	check(t, "decisions", v.Decisions, []string{"retry", "deadline_exceeded"})
	c := v.Cut
	mid := func(b box) float64 { return (b.Left + b.Right) / 2 }
	if d := mid(c.Line) - mid(*v.Deadline); d < -2 || d > 2 {
		t.Errorf("the cut at x=%.1f is not on the deadline at x=%.1f", mid(c.Line), mid(*v.Deadline))
	}
	if d := c.Left.Left - v.Bars[1].Right; d < -1 || d > 1 {
		t.Errorf("the time left starts at x=%.1f, not at the end of the last attempt, x=%.1f", c.Left.Left, v.Bars[1].Right)
	}
	if d := c.Left.Right - mid(*v.Deadline); d < -2 || d > 2 {
		t.Errorf("the time left ends at x=%.1f, not at the deadline, x=%.1f", c.Left.Right, mid(*v.Deadline))
	}
	if c.Pause == nil || c.Pause.Right <= mid(*v.Deadline)+2 {
		t.Errorf("the pause %+v does not cross the deadline at x=%.1f", c.Pause, mid(*v.Deadline))
	}
	if want := "deadline_exceeded: 30 ms left after attempt 2, less than the next pause (backoff 40 ms)"; c.Label != want {
		t.Errorf("cut label %q, want %q", c.Label, want)
	}
	if v.Outcome != "outcome deadline_exceeded" {
		t.Errorf("outcome %q", v.Outcome)
	}
}

// TestHedgedTimeline: a hedge and the attempt it hedged are drawn as
// parallel lanes: a row each, the hedge's bar starting under the other's
// before it ended, no pause between them, one band behind both and a link
// from the attempt hedged down to its hedge at the instant it was sent;
// a superseded attempt is faded and outlined, unlike the others, and the
// legend says so, which a page without hedges does not.
func TestHedgedTimeline(t *testing.T) {
	p := open(t, pageOf(t, report(t, hedgedReads()...), "hedged"))
	type timeline struct {
		Bars      []box    `json:"bars"`
		Decisions []string `json:"decisions"`
		Labels    []string `json:"labels"`
		Pauses    int      `json:"pauses"`
		Races     []struct {
			box
			Attempts string `json:"attempts"`
		} `json:"races"`
		Links   []box    `json:"links"`
		Opacity []string `json:"opacity"`
		Dashes  []string `json:"dashes"`
	}
	view := func(id string) timeline {
		t.Helper()
		return evalAs[timeline](t, p, `(() => {
			const art = [...document.querySelectorAll('article[data-role=operation]')]
				.find(a => a.querySelector('.opid').textContent.startsWith(`+jsString(id)+` + '  '));
			const rect = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
			const all = s => [...art.querySelectorAll(s)];
			const bars = all('[data-role=attempt-bar]');
			return {
				bars: bars.map(rect),
				decisions: all('[data-role=attempt]').map(g => g.dataset.decision),
				labels: all('[data-role=attempt-label]').map(e => e.textContent),
				pauses: all('[data-role=pause]').length,
				races: all('[data-role=race]').map(e => Object.assign(rect(e), {attempts: e.dataset.attempts})),
				links: all('[data-role=hedge-link] line').map(rect),
				opacity: bars.map(b => getComputedStyle(b).fillOpacity),
				dashes: bars.map(b => getComputedStyle(b).strokeDasharray),
			};
		})()`)
	}
	contains := func(outer, inner box) bool {
		return outer.Left <= inner.Left+0.5 && outer.Right >= inner.Right-0.5 && outer.Top <= inner.Top+0.5 && outer.Bottom >= inner.Bottom-0.5
	}

	won := view("op-hedge-won")
	if len(won.Bars) != 2 {
		t.Fatalf("op-hedge-won: %d bars, want 2", len(won.Bars))
	}
	first, hedge := won.Bars[0], won.Bars[1]
	if !(hedge.Left > first.Left && hedge.Left < first.Right && hedge.Top >= first.Bottom) {
		t.Errorf("op-hedge-won: the hedge %+v does not start under attempt 1 %+v while it runs, on a lane of its own", hedge, first)
	}
	check(t, "decisions", won.Decisions, []string{superseded, ret})
	check(t, "labels", won.Labels, []string{"canceled · superseded · other_attempt", "200 · return · response · hedge of #1"})
	if won.Pauses != 0 {
		t.Errorf("op-hedge-won: %d pauses between attempts in flight together", won.Pauses)
	}
	if len(won.Races) != 1 || won.Races[0].Attempts != "1 2" || !contains(won.Races[0].box, first) || !contains(won.Races[0].box, hedge) {
		t.Errorf("op-hedge-won: races %+v; want one band behind both bars %+v %+v", won.Races, first, hedge)
	}
	if len(won.Links) != 1 || math.Abs(won.Links[0].Left-hedge.Left) > 2 || won.Links[0].Top < first.Top || won.Links[0].Top > first.Bottom ||
		math.Abs(won.Links[0].Bottom-hedge.Top) > 1 {
		t.Errorf("op-hedge-won: links %+v; want one from inside attempt 1 %+v down to the hedge's start %+v", won.Links, first, hedge)
	}
	if won.Opacity[0] == won.Opacity[1] || won.Dashes[0] == won.Dashes[1] || won.Dashes[1] != "none" {
		t.Errorf("op-hedge-won: the superseded bar (opacity %s, dashes %s) is not drawn apart from the winner's (%s, %s)",
			won.Opacity[0], won.Dashes[0], won.Opacity[1], won.Dashes[1])
	}

	// Two rounds: each is a race of its own, the pause between them.
	rounds := view("op-two-rounds")
	var races []string
	for _, r := range rounds.Races {
		races = append(races, r.Attempts)
	}
	check(t, "op-two-rounds races", races, []string{"1 2", "3 4"})
	check(t, "op-two-rounds decisions", rounds.Decisions, []string{retry, retry, ret, superseded})
	if rounds.Pauses != 1 || len(rounds.Links) != 2 || len(rounds.Bars) != 4 || !(rounds.Races[1].Top > rounds.Races[0].Bottom) {
		t.Errorf("op-two-rounds: %d pauses, %d links, races %+v; want 1 pause before the second round, 2 links, the rounds one under the other",
			rounds.Pauses, len(rounds.Links), rounds.Races)
	}

	// A read that answered alone has no band.
	if alone := view("op-rate-limited"); len(alone.Races) != 0 || len(alone.Links) != 0 {
		t.Errorf("op-rate-limited: races %+v, links %+v; want none", alone.Races, alone.Links)
	}

	legend := func(p *loaded) []string {
		return evalAs[[]string](t, p, `[...document.querySelectorAll('[data-role=legend-race], [data-role=legend-hedge], [data-role=legend-superseded]')].map(e => e.textContent)`)
	}
	check(t, "legend", legend(p), []string{"attempts in flight together: an attempt and its hedges", "hedge sent", "superseded: canceled, another attempt won"})
	if plain := legend(open(t, pageOf(t, report(t, readTimeline(0).span()), "contract read"))); len(plain) != 0 {
		t.Errorf("a page without hedges explains them: %q", plain)
	}
}

// hostile goes into every string attribute: markup for text, attribute
// and URL positions, quotes, control and bidirectional characters. Its
// script would set window.__retryinspectPwned.
const hostile = "op\"'><script>window.__retryinspectPwned=1</script><img src=x onerror=\"window.__retryinspectPwned=2\"><svg onload=\"window.__retryinspectPwned=3\">\x1b[31m\r\n\u202e"

// hostileShown is hostile as the text report prints it: control and
// bidirectional characters as Go escapes.
const hostileShown = `op"'><script>window.__retryinspectPwned=1</script><img src=x onerror="window.__retryinspectPwned=2"><svg onload="window.__retryinspectPwned=3">\x1b[31m\r\n\u202e`

// TestHostileValuesAreText: hostile values are shown as text, as the text
// report shows them, and no script runs: not with the page's policy, and
// not without it (the escaping alone holds).
func TestHostileValuesAreText(t *testing.T) {
	o := op{id: hostile, method: "GET", url: "http://user:pw@inventory.internal/items?token=" + hostile, server: hostile,
		outcome: string(attrs.OutcomeReturn), deadline: 400, end: 81, tries: []try{
			{requestID: hostile, n: 1, status: 200, class: hostile, elapsed: 80, remaining: 400, decision: hostile, reason: hostile},
		}}
	html := pageOf(t, report(t, o.span()), hostile)
	policy := `<meta http-equiv="Content-Security-Policy"`
	if !bytes.Contains(html, []byte(policy)) {
		t.Fatal("the page has no Content Security Policy")
	}
	withoutPolicy := bytes.Replace(html, []byte(policy), []byte(`<meta name="removed-policy"`), 1)
	for name, page := range map[string][]byte{"as written": html, "without its policy": withoutPolicy} {
		t.Run(name, func(t *testing.T) {
			p := open(t, page)
			res := evalAs[struct {
				Pwned      bool     `json:"pwned"`
				Scripts    int      `json:"scripts"`
				Handlers   []string `json:"handlers"`
				Title      string   `json:"title"`
				Request    string   `json:"request"`
				Lane       string   `json:"lane"`
				Label      string   `json:"label"`
				Source     string   `json:"source"`
				DocTitle   string   `json:"docTitle"`
				FindingIDs []string `json:"findingIDs"`
			}](t, p, `({
				pwned: typeof window.__retryinspectPwned !== 'undefined',
				scripts: document.scripts.length + document.images.length,
				handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.startsWith('on')),
				title: document.querySelector('.opid').textContent,
				request: document.querySelector('table.attempts tr:nth-child(2) td:nth-child(2)').textContent,
				lane: document.querySelector('[data-role=lane] .lanelabel').textContent,
				label: document.querySelector('[data-role=attempt-label]').textContent,
				source: document.querySelector('header code').textContent,
				docTitle: document.title,
				findingIDs: [...document.querySelectorAll('.finding .where')].map(e => e.textContent),
			})`)
			if res.Pwned || res.Scripts != 0 || len(res.Handlers) != 0 {
				t.Errorf("injected markup: script ran %v, %d script and img elements, handlers %v", res.Pwned, res.Scripts, res.Handlers)
			}
			if !strings.HasPrefix(res.Title, hostileShown+"  ") {
				t.Errorf("operation title %q, want it to start with %q", res.Title, hostileShown)
			}
			if strings.Contains(res.Title, "pw@") || strings.Contains(res.Title, "token="+hostileShown) {
				t.Errorf("the URL is not sanitized: %q", res.Title)
			}
			if res.Request != hostileShown || res.Source != hostileShown || res.DocTitle != "retryinspect report: "+hostileShown {
				t.Errorf("request id %q, source %q, title %q; want %q", res.Request, res.Source, res.DocTitle, hostileShown)
			}
			if !strings.HasPrefix(res.Lane, `op"'><script>window.__re`) || !strings.HasPrefix(res.Label, "200 + op\"'><script>") {
				t.Errorf("lane %q, label %q: want the hostile text, clipped", res.Lane, res.Label)
			}
			if len(res.FindingIDs) == 0 || !strings.HasPrefix(res.FindingIDs[0], "operation "+hostileShown+", trace ") {
				t.Errorf("findings name %q", res.FindingIDs)
			}
		})
	}
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s %q, want %q", what, got, want)
	}
}

// artifacts returns the repository's untracked artifacts/ folder.
func artifacts(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !bytes.Contains(b, []byte("module github.com/otelretry/otelretry-go\n")) {
		t.Fatalf("%s is not the repository root", dir)
	}
	out := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}
