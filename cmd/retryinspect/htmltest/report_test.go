// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmltest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// The report answers first: each check below runs on a storm and on a
// clean run, in the browser.

// expectation is what a fixture's page must show.
type expectation struct {
	headlines []string // every dependency's headline, in order
	cards     []card   // every operation card, in order
	refusals  int      // budget refusals on the strip
	maxRatio  float64  // the highest retry ratio of a column of the strip
}

// card is an operation card: its first operation, the operations it
// stands for and its severity.
type card struct {
	ID       string `json:"id"`
	Count    int    `json:"count"`
	Severity string `json:"severity"`
}

var fixtures = []struct {
	name  string
	roots func() []tracefixture.Span
	want  expectation
}{{
	name:  "storm",
	roots: storm,
	want: expectation{
		headlines: []string{
			"inventory.internal: 45 of 49 operations did not return: 30 max_attempts, 14 budget_exhausted, 1 deadline_exceeded; all failed attempts 503; 2.24× load; the budget refused 14 retries",
			"payments.internal: 1 of 3 operations did not return: 1 check_state; all failed attempts timeout; 1.67× load; 1 finding",
			"catalog.internal: 1 of 1 operation did not return: 1 deadline_exceeded; all failed attempts 503; 1× load",
			"users.internal: all 6 operations returned; no failed attempt; 1× load",
		},
		cards: []card{
			{"op-refund", 1, "finding"},
			{"op-write", 1, "outcome"}, {"op-items-5", 30, "outcome"}, {"op-busy", 1, "outcome"}, {"op-items-35", 14, "outcome"}, {"op-slow", 1, "outcome"},
			{"op-items-1", 4, "return"}, {"op-user-1", 6, "return"}, {"op-pay", 1, "return"},
		},
		refusals: 14,
		maxRatio: 2.0 / 3,
	},
}, {
	name:  "hedged",
	roots: hedgedReads,
	want: expectation{
		headlines: []string{
			"inventory.internal: all 8 operations returned; all failed attempts 503; 1.75× load; hedge rate 0.500 (4 of 8 operations), hedge win rate 0.500 (2 of 4 hedged), hedges refused: hedge_limit 1",
			"search.internal: all 1 operation returned; no failed attempt; 2× load; hedge rate 1.000 (1 of 1 operation), hedge win rate 1.000 (1 of 1 hedged), hedges refused: none",
		},
		cards: []card{
			{"op-hedge-won", 1, "return"}, {"op-first-won", 1, "return"}, {"op-in-flight", 1, "return"}, {"op-two-rounds", 1, "return"},
			{"op-rate-limited", 4, "return"}, {"op-search", 1, "return"},
		},
		maxRatio: 1,
	},
}, {
	name:  "clean run",
	roots: cleanRun,
	want: expectation{
		headlines: []string{
			"inventory.internal: all 3 operations returned; all failed attempts 503; 2× load",
			"users.internal: all 8 operations returned; no failed attempt; 1× load",
			"payments.internal: all 1 operation returned; no failed attempt; 1× load",
		},
		cards:    []card{{"op-user-1", 8, "return"}, {"op-items-1", 3, "return"}, {"op-order", 1, "return"}},
		maxRatio: 0.5,
	},
}}

func TestReportAnswersFirst(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := report(t, f.roots()...)
			p := open(t, pageOf(t, r, f.name))
			t.Run("headlines", func(t *testing.T) { checkHeadlines(t, p, f.want) })
			t.Run("legend", func(t *testing.T) { checkColours(t, p) })
			t.Run("groups", func(t *testing.T) { checkCards(t, p, f.want, len(r.Operations)) })
			t.Run("scaled", func(t *testing.T) { checkScaled(t, p) })
			t.Run("strip", func(t *testing.T) { checkStrip(t, p, f.want) })
			t.Run("labels", func(t *testing.T) {
				checkNotClipped(t, p)
				if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(760, 900), chromedp.Evaluate[chromedp.Void](afterPaint, chromedp.EvalAwaitPromise)); err != nil {
					t.Fatal(err)
				}
				checkNotClipped(t, p)
			})
		})
	}
}

// checkHeadlines: one headline per dependency, before anything else of
// the report, the dependency with the most operations that did not return
// first.
func checkHeadlines(t *testing.T, p *loaded, want expectation) {
	got := evalAs[struct {
		Lines []string `json:"lines"`
		First bool     `json:"first"`
	}](t, p, `({
		lines: [...document.querySelectorAll('[data-role=headline]')].map(e => e.textContent.replace(/\s+/g, ' ').trim()),
		first: (() => { const h = document.querySelector('[data-role=headlines]'); const c = document.querySelector('.cards');
			return !!h && !!c && !!(h.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING); })(),
	})`)
	check(t, "headlines", got.Lines, want.headlines)
	if !got.First {
		t.Error("the headlines do not come before the cards")
	}
}

// checkColours: the legend gives each outcome and decision (and other
// values) a colour of its own, and every attempt bar, outcome badge and
// overview bar has the colour of its decision or outcome in the legend.
func checkColours(t *testing.T, p *loaded) {
	got := evalAs[struct {
		Legend     map[string]string `json:"legend"`
		Mismatches []string          `json:"mismatches"`
		Bars       int               `json:"bars"`
	}](t, p, `(() => {
		const legend = {};
		for (const e of document.querySelectorAll('[data-role=legend-item]'))
			legend[e.dataset.value] = getComputedStyle(e.querySelector('.sw')).backgroundColor;
		const mismatches = []; let bars = 0;
		const want = (value, colour, what) => { if (legend[value] !== colour) mismatches.push(what + ' ' + value + ': ' + colour + ', legend ' + legend[value]); };
		for (const g of document.querySelectorAll('[data-role=attempt]')) {
			bars++; want(g.dataset.decision, getComputedStyle(g.querySelector('[data-role=attempt-bar]')).fill, 'attempt bar');
		}
		for (const e of document.querySelectorAll('[data-role=outcome]')) want(e.dataset.outcome, getComputedStyle(e).backgroundColor, 'outcome badge');
		for (const e of document.querySelectorAll('[data-role=opbar] rect')) want(e.dataset.outcome, getComputedStyle(e).fill, 'overview bar');
		return {legend, mismatches, bars};
	})()`)
	var values []string
	for _, d := range attrs.Decisions() {
		values = append(values, string(d))
	}
	values = append(values, "other")
	seen := map[string]string{}
	for _, v := range values {
		c, ok := got.Legend[v]
		if !ok {
			t.Errorf("the legend has no %s", v)
			continue
		}
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share the colour %s", v, other, c)
		}
		seen[c] = v
	}
	if len(got.Mismatches) > 0 || got.Bars == 0 {
		t.Errorf("%d attempt bars; colours not those of the legend: %q", got.Bars, got.Mismatches)
	}
}

// checkCards: identical operations share one card that counts them, and
// the cards come by severity: findings, then outcomes other than return,
// then the rest, each in time order.
func checkCards(t *testing.T, p *loaded, want expectation, operations int) {
	got := evalAs[[]struct {
		card
		Members int    `json:"members"`
		Note    string `json:"note"`
	}](t, p, `[...document.querySelectorAll('article[data-role=operation]')].map(a => ({
		id: a.querySelector('.opid').textContent.split('  ')[0],
		count: +a.dataset.count,
		severity: a.dataset.severity,
		members: a.querySelectorAll('[data-role=group-member]').length,
		note: (a.querySelector('[data-role=group-note]') || {}).textContent || '',
	}))`)
	var cards []card
	total := 0
	for _, c := range got {
		cards = append(cards, c.card)
		total += c.Count
		if c.Count > 1 && (c.Members != c.Count || !strings.HasPrefix(c.Note, fmt.Sprintf("%d identical operations", c.Count))) {
			t.Errorf("card %s of %d operations lists %d and says %q", c.ID, c.Count, c.Members, c.Note)
		}
	}
	if !slices.Equal(cards, want.cards) {
		t.Errorf("cards\n%v, want\n%v", cards, want.cards)
	}
	if total != operations {
		t.Errorf("the cards stand for %d operations, the report has %d", total, operations)
	}
}

// checkScaled: each timeline is drawn on its operation's own axis, so
// that its attempts fill it, and a deadline far beyond the operation's end
// is a marker at the edge, not a cut across the axis.
func checkScaled(t *testing.T, p *loaded) {
	got := evalAs[[]struct {
		ID       string  `json:"id"`
		Plot     box     `json:"plot"`
		Right    float64 `json:"right"`
		OffAxis  bool    `json:"offAxis"`
		Deadline *box    `json:"deadline"`
		Cut      *box    `json:"cut"`
		Stop     *box    `json:"stop"`
		LastBar  *box    `json:"lastBar"`
	}](t, p, `[...document.querySelectorAll('article[data-role=operation]')].map(a => {
		const rect = e => { if (!e) return null; const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
		const bars = [...a.querySelectorAll('[data-role=attempt-bar], [data-role=state-check] rect')].map(rect);
		const d = a.querySelector('[data-role=deadline]');
		return {
			id: a.querySelector('.opid').textContent.split('  ')[0],
			plot: rect(a.querySelector('[data-role=plot]')),
			right: Math.max(...bars.map(b => b.right)),
			offAxis: !!d && d.dataset.offAxis === 'true',
			deadline: rect(d),
			cut: rect(a.querySelector('[data-role=cut-left]')),
			stop: rect(a.querySelector('[data-role=cut-stop]')),
			lastBar: bars.length ? bars[bars.length - 1] : null,
		};
	})`)
	for _, tl := range got {
		width := tl.Plot.Right - tl.Plot.Left
		if tl.ID == "op-busy" {
			// 0 ms recorded, in an operation of 1 ms: the bar is a sliver
			// at the axis' start, the deadline 2 s away a marker past its
			// end, and the cut a stop after the bar, not the time left
			// drawn across the axis.
			if !tl.OffAxis || tl.Deadline == nil || tl.Deadline.Left < tl.Plot.Right-2 {
				t.Errorf("op-busy: the deadline 2 s after a 1 ms operation is not a marker past the axis: %+v, plot %+v", tl.Deadline, tl.Plot)
			}
			if tl.Cut != nil || tl.Stop == nil || tl.Stop.Left < tl.LastBar.Left-1 || tl.Stop.Left > tl.LastBar.Right+2 {
				t.Errorf("op-busy: cut %+v, stop %+v; want no time left drawn, a stop at the bar's end %+v", tl.Cut, tl.Stop, tl.LastBar)
			}
			continue
		}
		if fill := (tl.Right - tl.Plot.Left) / width; fill < 0.6 || fill > 1.03 {
			t.Errorf("%s: its attempts end at %.0f%% of its axis", tl.ID, 100*fill)
		}
	}
	if len(got) == 0 {
		t.Error("no timeline")
	}
}

// checkStrip: the overview has a strip of the retry ratio over time, on
// the overview's axis, with the budget's refusals marked and counted.
func checkStrip(t *testing.T, p *loaded, want expectation) {
	got := evalAs[struct {
		Found    bool      `json:"found"`
		Ratios   []float64 `json:"ratios"`
		Refusals []int     `json:"refusals"`
		Note     string    `json:"note"`
		Strip    box       `json:"strip"`
		Lanes    box       `json:"lanes"`
	}](t, p, `(() => {
		const s = document.querySelector('svg[data-role=strip]');
		if (!s) return {found: false};
		const rect = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
		return {
			found: true,
			ratios: [...s.querySelectorAll('[data-role=rate]')].map(e => +e.dataset.ratio),
			refusals: [...s.querySelectorAll('[data-role=refusal]')].map(e => +e.dataset.count),
			note: document.querySelector('[data-role=strip-note]').textContent,
			strip: rect(s), lanes: rect(document.querySelector('svg[data-role=overview]')),
		};
	})()`)
	if !got.Found {
		t.Fatal("no strip of the retry ratio")
	}
	refused := 0
	for _, n := range got.Refusals {
		refused += n
	}
	if refused != want.refusals {
		t.Errorf("the strip marks %d refusals, want %d", refused, want.refusals)
	}
	if len(got.Ratios) == 0 || slices.Max(got.Ratios) < want.maxRatio-1e-9 || slices.Max(got.Ratios) > 1 {
		t.Errorf("retry ratios %v, want the highest at least %.3f", got.Ratios, want.maxRatio)
	}
	wantNote := "the budget refused no retry"
	if want.refusals > 0 {
		wantNote = fmt.Sprintf("the budget refused %d retries", want.refusals)
	}
	if !strings.Contains(got.Note, wantNote) {
		t.Errorf("strip note %q, want %q", got.Note, wantNote)
	}
	if got.Strip.Top < got.Lanes.Bottom || got.Strip.Left != got.Lanes.Left || got.Strip.Right != got.Lanes.Right {
		t.Errorf("the strip %+v is not under the overview %+v, on its width", got.Strip, got.Lanes)
	}
}

// checkNotClipped measures, in the browser, every label of the page: a
// drawing's text lies inside its drawing, no element's content overflows
// a box that hides it, and nothing sticks out of the page's width.
func checkNotClipped(t *testing.T, p *loaded) {
	got := evalAs[[]string](t, p, `(() => {
		const out = [], vw = document.documentElement.clientWidth;
		const name = e => e.tagName.toLowerCase() + (e.dataset.role ? '[' + e.dataset.role + ']' : '') + ' "' + e.textContent.trim().slice(0, 50) + '"';
		for (const t of document.querySelectorAll('svg text')) {
			const r = t.getBoundingClientRect(), s = t.closest('svg').getBoundingClientRect();
			if (r.width === 0) continue;
			if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
				out.push(name(t) + ' outside its drawing');
		}
		for (const e of document.querySelectorAll('body *')) {
			const r = e.getBoundingClientRect();
			if (r.width === 0 || e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
			const cs = getComputedStyle(e);
			if (e.scrollWidth > e.clientWidth + 1 && cs.overflowX !== 'visible' && e.tagName.toLowerCase() !== 'svg') out.push(name(e) + ' overflows its box');
			if (cs.textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth) out.push(name(e) + ' is cut with an ellipsis');
			if (r.right > vw + 0.5) out.push(name(e) + ' sticks out of the page');
		}
		return out;
	})()`)
	if len(got) > 0 {
		t.Errorf("%d clipped labels: %q", len(got), got[:min(len(got), 12)])
	}
}
