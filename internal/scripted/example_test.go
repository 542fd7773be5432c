// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package scripted_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
)

func ExampleNew() {
	rt := scripted.New(
		scripted.Step{Delay: time.Millisecond, Status: http.StatusServiceUnavailable},
		scripted.Step{Status: http.StatusOK},
	)
	for range 3 { // past the script's end, the last step repeats
		req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
		resp, _ := rt.RoundTrip(req)
		fmt.Println(resp.StatusCode)
	}
	fmt.Println(len(rt.Calls()), "calls")
	// Output:
	// 503
	// 200
	// 200
	// 3 calls
}
