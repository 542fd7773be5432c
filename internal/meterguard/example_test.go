// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package meterguard_test

import (
	"context"
	"fmt"

	"github.com/otelretry/otelretry-go/internal/meterguard"
)

func ExampleMeter() {
	// A Meter that made nothing (here: none at all) hands out no-ops.
	counter, err := meterguard.Meter(nil).Int64Counter("requests")
	counter.Add(context.Background(), 1) // no panic
	fmt.Println(err)
	// Output:
	// <nil>
}
