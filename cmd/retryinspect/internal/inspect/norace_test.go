// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package inspect

const raceEnabled = false
