// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestZZNoLeakAfterAttacks runs last (file order) so that the attack tests
// are checked for leaks even while some of them fail (TestMain's goleak
// only checks a green run).
func TestZZNoLeakAfterAttacks(t *testing.T) { goleak.VerifyNone(t) }
