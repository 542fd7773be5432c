// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestZZNoLeakAfterEveryTest runs last (file order), so that every test is
// checked for leaked goroutines even while some of them fail (TestMain's
// goleak only checks a green run).
func TestZZNoLeakAfterEveryTest(t *testing.T) { goleak.VerifyNone(t) }
