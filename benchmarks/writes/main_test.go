// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: the
// smoke run's servers and transports must all be released.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
