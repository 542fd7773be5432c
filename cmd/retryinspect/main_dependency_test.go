// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"testing"
)

// docs/budget.md: "A dependency, on every page and in retryinspect, is
// what the budget is kept per: the request's host as its URL writes it
// (... the port only when it is not the scheme's default, as a number".
// The transport keys http://api.test:0/x as "api.test:0"
// (TestHostOfDropsTheSchemesDefaultPort), apart from api.test; on the
// library's own trace retryinspect names each dependency.
func TestRetryinspectNamesTheTransportsDependency(t *testing.T) {
	for target, want := range map[string]string{
		"http://api.test:080/x":   "api.test",
		"http://API.test.:8080/x": "api.test:8080",
		"http://api.test:0/x":     "api.test:0",
		"http://[::1]:08080/x":    "[::1]:8080",
	} {
		t.Run(target, func(t *testing.T) {
			_, out, _ := runOnFile(t, libraryTraceOfGET(t, target), "-json")
			var r struct{ Dependencies []struct{ Name string } }
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(r.Dependencies) != 1 || r.Dependencies[0].Name != want {
				t.Errorf("retryinspect names the dependency of %s %+v, the transport keys it %q", target, r.Dependencies, want)
			}
		})
	}
}
