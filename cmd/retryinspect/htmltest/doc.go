// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package htmltest tests retryinspect's HTML report in a real browser:
// headless Chromium (Debian's chromium, which scripts/test.sh installs),
// driven with chromedp. It is a module of its own so that the browser
// driver never enters cmd/retryinspect's go.mod; it holds tests only.
//
// The tests render span sets through the command's own reader, inspector
// and renderer, open each page from a loopback server in a fresh browser
// tab, and check what a person would see: the contract's fixed read as
// three bars in order with the deadline to their right, the POST timeout
// as one bar deciding check_state, the cut of a deadline-exceeded
// operation, hostile values shown as text with no script run, no
// network request besides the page itself, and a hedged read's attempts
// as parallel lanes (TestHedgedTimeline: the hedge on a row of its own,
// starting under the attempt it hedged, one band behind both, a link
// where it was sent, the superseded attempt drawn apart, the legend
// saying so). On a storm, a hedged run and a clean run
// (TestReportAnswersFirst) they check that the page answers first: a
// headline per dependency before anything else, a legend with a colour of
// its own for each outcome and decision that every bar and badge wears,
// identical operations sharing one card that counts them, the cards by
// severity, each timeline on its own operation's axis, the strip of the
// retry ratio and the budget's refusals, and every label inside its
// drawing and its box, measured in the browser at two widths. They also
// take screenshots (artifacts/retryinspect-report.png, of the demo's own
// run, whose spans `go run` of examples/demo writes, and
// retryinspect-storm.png, at the repository root, untracked; -update-docs
// writes the top of each page to docs/, once the test has seen it show
// every headline and the legend) and log the size and load time of the
// pages of 1 000 and 10 000 operations.
//
// Without Chromium the tests skip, saying so; with CI=true they fail
// instead. RETRYINSPECT_CHROMIUM names the browser binary when it is not
// chromium on the PATH.
package htmltest
