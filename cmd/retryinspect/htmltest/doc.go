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
// operation, hostile values shown as text with no script run, and no
// network request besides the page itself. They also take a screenshot
// (artifacts/retryinspect-report.png at the repository root, untracked)
// and log the size and load time of the pages of 1 000 and 10 000
// operations.
//
// Without Chromium the tests skip, saying so; with CI=true they fail
// instead. RETRYINSPECT_CHROMIUM names the browser binary when it is not
// chromium on the PATH.
package htmltest
