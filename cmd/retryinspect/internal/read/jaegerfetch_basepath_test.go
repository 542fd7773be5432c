// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// The endpoint is a base URL: its path is kept as written and the API's
// path appended. An escaped slash in a proxy's prefix (/a%2Fb) became a
// real one (/a/b), another path (a reviewer's find).
func TestABackendsBasePathIsKeptAsWritten(t *testing.T) {
	for endpoint, wantPath := range map[string]string{
		"http://127.0.0.1:16686/a%2Fb":   "/a%2Fb/api/v3/traces",
		"http://127.0.0.1:16686/a%2Fb/":  "/a%2Fb/api/v3/traces",
		"http://127.0.0.1:16686/jaeger/": "/jaeger/api/v3/traces",
	} {
		u, err := JaegerQuery{Endpoint: endpoint, Service: "s", Lookback: time.Hour}.URL(time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := url.Parse(u)
		if got.EscapedPath() != wantPath {
			t.Errorf("-jaeger %s asks %s, want %s", endpoint, got.EscapedPath(), wantPath)
		}
		v, err := VictoriaLogsQuery{Endpoint: endpoint, Lookback: time.Hour}.URL()
		if err != nil {
			t.Fatal(err)
		}
		got, _ = url.Parse(v)
		if want := strings.Replace(wantPath, "/api/v3/traces", vlQueryPath, 1); got.EscapedPath() != want {
			t.Errorf("-victorialogs %s asks %s, want %s", endpoint, got.EscapedPath(), want)
		}
	}
}
