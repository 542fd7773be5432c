// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package readmesnippets

// buildFlags: see race_test.go.
var buildFlags []string
