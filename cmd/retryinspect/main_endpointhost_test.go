// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

// A backend URL that names a port and no host ("http://:1") was taken and
// asked of the local machine's own port, where Go dials an empty host:
// like one with no host at all, it is refused up front, for -jaeger and
// -victorialogs alike, before any backend is asked (a find left in the
// note of stop 86).
func TestABackendURLThatNamesNoHostIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"-jaeger", "http://:1", "-service", "s"},
		{"-jaeger", "http://:16686/jaeger", "-trace", "ab"},
		{"-victorialogs", "http://:9428", "-service", "s"},
		{"-victorialogs", "https://user:secret@:9428", "-service", "s"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != exitError || !strings.Contains(errOut.String(), "naming a host") || strings.Contains(errOut.String(), "secret") {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and the URL refused for naming no host, without its password", args, code, errOut.String(), exitError)
		}
	}
}
