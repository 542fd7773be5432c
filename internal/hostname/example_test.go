// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package hostname_test

import (
	"fmt"

	"github.com/otelretry/otelretry-go/internal/hostname"
)

func ExampleOne() {
	for _, name := range []string{"API.Test.", "0:0::1", "::FFFF:7F00:1", "FE80::1%En0", "\u0130.test"} {
		fmt.Println(hostname.One(name))
	}
	// Output:
	// api.test
	// ::1
	// 127.0.0.1
	// fe80::1%En0
	// İ.test
}
