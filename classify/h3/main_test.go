// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// servers, client connections and transports must all stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
