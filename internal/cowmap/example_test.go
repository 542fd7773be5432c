// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package cowmap_test

import (
	"fmt"

	"github.com/otelretry/otelretry-go/internal/cowmap"
)

func ExampleMap() {
	var labels cowmap.Map[string, string]
	build := func(method string) func() string {
		return func() string { fmt.Println("building", method); return "method=" + method }
	}
	fmt.Println(labels.Get("GET", build("GET")))
	fmt.Println(labels.Get("GET", build("GET"))) // stored: no second build
	// Output:
	// building GET
	// method=GET
	// method=GET
}
