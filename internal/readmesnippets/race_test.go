// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package readmesnippets

// buildFlags are the flags of the go commands these tests run: the test
// binary's own, so that under -race (scripts/test.sh) the snippets'
// dependencies, the cloud SDKs among them, are compiled in the one variant
// the other modules' race tests compile too.
var buildFlags = []string{"-race"}
