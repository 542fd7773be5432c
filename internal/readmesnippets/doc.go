// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package readmesnippets keeps every Go snippet of the repository's
// README.md and of its pages under docs/ compiling. TestSnippetsUpToDate
// extracts each ```go block, wraps it into a file of package snippets (its
// statements into a function of their own, its declarations at package
// level, the imports it uses added), and fails when the files in snippets/
// differ from what the Markdown gives; `go test -run TestSnippetsUpToDate
// -update` rewrites them. All the snippets share one package, so that a
// declaration has one home across the README and docs/, except a snippet
// that is a whole program (it starts with "package main"), which stays
// whole, a package main of its own in snippets/program_NAME/. `go build
// ./...` and `go vet ./...` of this module then compile and vet every
// snippet; TestREADMEProgramSendsTraceContext runs the README's program
// against a server on 127.0.0.1 and checks the trace context it sends. It
// is a module of its own, so that the SDKs and protocol libraries the
// snippets use stay out of the library's go.mod.
package readmesnippets
