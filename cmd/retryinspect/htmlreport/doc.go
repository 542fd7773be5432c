// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package htmlreport writes retryinspect's HTML report for a program that
// holds its spans itself, such as the demo (examples/demo): it reads them
// as `retryinspect -html REPORT FILE` does, checks them against
// the retry attempt contract and writes the same self-contained page.
//
// It is the command's own reader, inspector and renderer behind one call;
// it is not a stable API, and it brings the command's dependencies (the
// Collector's pdata) into the module that imports it.
package htmlreport
