// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package inspect

// raceEnabled scales large test inputs down under the race detector,
// which makes analysis about ten times slower.
const raceEnabled = true
