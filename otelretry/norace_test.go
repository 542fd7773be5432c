// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package otelretry_test

// raceScale: see race_test.go.
const raceScale = 1
