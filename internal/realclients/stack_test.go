// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
)

// The environment of the tests against the end-to-end stack (see doc.go).
const (
	envE2E        = "OTELRETRY_E2E"
	envPrometheus = "OTELRETRY_PROMETHEUS_URL"
	envOTLP       = "OTELRETRY_OTLP_ENDPOINT"
)

// stackEndpoint returns the stack's endpoint in env. It skips the test
// unless OTELRETRY_E2E=1; with it, a missing endpoint is a failure, not a
// skip, so that a broken set-up cannot pass unnoticed.
func stackEndpoint(t *testing.T, env string) string {
	t.Helper()
	if os.Getenv(envE2E) != "1" {
		t.Skipf("needs the end-to-end stack: set %s=1 and source the env file of scripts/stack.sh up (scripts/e2e.sh does both)", envE2E)
	}
	v := strings.TrimRight(os.Getenv(env), "/")
	if v == "" {
		t.Fatalf("%s=1 but %s is not set: source the env file of scripts/stack.sh up (or run scripts/e2e.sh)", envE2E, env)
	}
	return v
}

// fault is what the counting proxy does with one request.
type fault int

const (
	pass        fault = iota // pass it on to the real server
	unavailable              // answer 503 itself; the real server never sees it
	frozen                   // never answer, until the client gives up
)

// proxy is a counting reverse proxy on 127.0.0.1 in front of a real
// server: it counts every request it receives (its server's count), treats
// the n-th as faults[n-1] (pass after the last), and records the status of
// each answer the real server gave.
type proxy struct {
	*server
	mu       sync.Mutex
	upstream []int
}

func newProxy(t *testing.T, tel *telemetry, target string, faults ...fault) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	p := &proxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport: base,
		ModifyResponse: func(resp *http.Response) error {
			p.mu.Lock()
			p.upstream = append(p.upstream, resp.StatusCode)
			p.mu.Unlock()
			return nil
		},
	}
	p.server = newServer(t, tel, func(n int, w http.ResponseWriter, r *http.Request) {
		f := pass
		if n <= len(faults) {
			f = faults[n-1]
		}
		switch f {
		case unavailable:
			statuses(http.StatusServiceUnavailable)(n, w, r)
		case frozen:
			freeze(r)
		default:
			rp.ServeHTTP(w, r)
		}
	})
	return p
}

// upstreamStatuses returns the statuses the real server answered.
func (p *proxy) upstreamStatuses() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.upstream...)
}
