// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: attempt
// timers, drained bodies and loopback servers must all be released.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
