// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"go.opentelemetry.io/otel/log/global"
)

// ExampleWithLoggerProvider leaves the global LoggerProvider as it found
// it (a reviewer's find: it set its own and then a no-op one, and a
// provider set before it could not be put back, the global's loggers
// being handed over once, to the first provider set).
func TestExampleWithLoggerProviderLeavesTheGlobalAlone(t *testing.T) {
	before := global.GetLoggerProvider()
	ExampleWithLoggerProvider()
	if after := global.GetLoggerProvider(); after != before {
		t.Errorf("the global LoggerProvider was %T before the example, %T after", before, after)
	}
}
