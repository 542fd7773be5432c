// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package readfuzz holds the fuzz targets of retryinspect's readers, one
// per input format: arbitrary bytes go to the reader, and whatever it
// accepts goes to the inspector and to the three renderers. Malformed
// input must end in an error or in findings, never in a panic, and the
// text, JSON and HTML reports must all be written.
//
// The targets live apart from the command's tests on purpose. A fuzzing
// build instruments every package of its test binary. Here that is the
// readers and what they import. Among the command's tests it would also
// be the OpenTelemetry SDK, the exporters and gRPC that the trace fixtures
// need.
//
// The seeds are committed under testdata/seeds: five crafted span sets in
// each span format, which the command's TestFuzzSeeds writes with the
// fixtures and keeps up to date (go test -run TestFuzzSeeds -update in
// cmd/retryinspect), and the real captures of the end-to-end stack.
package readfuzz
