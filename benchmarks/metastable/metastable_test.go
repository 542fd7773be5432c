// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSmoke runs the whole benchmark in smoke mode, with the traffic split
// across two clients, and checks its structure only: every configuration
// is reported, the counts are consistent, the lines are in their format
// and the plot is written. It asserts nothing about timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every configuration for about a second each")
	}
	o := defaultOptions()
	o.smoke()
	o.clients = 2
	o.plot = filepath.Join(t.TempDir(), "goodput.svg")
	var out bytes.Buffer
	reports, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	if len(reports) != len(defaultConfigs()) {
		t.Fatalf("got %d reports, want %d", len(reports), len(defaultConfigs()))
	}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	ops := len(o.arrivals())
	for i, r := range reports {
		if r.config != o.configs[i] {
			t.Errorf("report %d is %s, want %s", i, r.config, o.configs[i])
		}
		if r.warning != "" && !strings.Contains(r.warning, "stray_requests=0 unfinished_ops=0") {
			t.Errorf("%s: %s", r.config, r.warning)
		}
		if r.amplification < 0 || r.amplification > 3 {
			t.Errorf("%s: amplification %v outside [0, 3]", r.config, r.amplification)
		}
		if r.unsent < 0 || r.unsent > ops {
			t.Errorf("%s: %d operations unsent of %d", r.config, r.unsent, ops)
		}
		if r.abandonedS < 0 || r.abandonedS > r.workS {
			t.Errorf("%s: abandoned work %v s, all work %v s", r.config, r.abandonedS, r.workS)
		}
		if len(r.goodput) != len(r.offered) || len(r.goodput) != int(o.total()/o.bucket) {
			t.Errorf("%s: %d goodput and %d offered buckets, want %d", r.config, len(r.goodput), len(r.offered), o.total()/o.bucket)
		}
		var offered float64
		for j, g := range r.goodput {
			if g < 0 || g > r.offered[j] {
				t.Fatalf("%s: bucket %d: goodput %v, offered %v", r.config, j, g, r.offered[j])
			}
			offered += r.offered[j] * o.bucket.Seconds()
		}
		if int(offered+0.5) != ops {
			t.Errorf("%s: buckets hold %v operations, the run offered %d", r.config, offered, ops)
		}
	}

	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) < len(reports)+1 {
		t.Fatalf("only %d lines printed", len(lines))
	}
	re := regexp.MustCompile(`^metastable config=(\S+) goodput_before=(\S+) goodput_during=(\S+) goodput_after=(\S+) goodput_end=(\S+) recovery_s=(\S+) amplification=(\S+) abandoned_work_s=(\S+)$`)
	for i, line := range lines[len(lines)-1-len(reports) : len(lines)-1] {
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %q does not match %s", line, re)
			continue
		}
		if m[1] != reports[i].config {
			t.Errorf("line %d is for %s, want %s", i, m[1], reports[i].config)
		}
		for _, f := range slices.Concat(m[2:6], m[7:]) {
			if _, err := strconv.ParseFloat(f, 64); err != nil {
				t.Errorf("line %q: %q is not a number", line, f)
			}
		}
		if rec, err := strconv.ParseFloat(m[6], 64); m[6] != "none" && (err != nil || rec < 0 || rec > o.after.Seconds()) {
			t.Errorf("line %q: recovery %q neither none nor within the after period", line, m[6])
		}
	}
	svg, err := os.ReadFile(o.plot)
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Fatalf("plot: %v, %.40q", err, svg)
	}
}

// otelretry-throttle runs by default, and throttles each client on its
// own: against a server that answers only 503, it sends fewer requests
// than operations (the throttle refuses first attempts), where otelretry
// alone retries; a fresh client of it is not throttled by another's
// history.
func TestThrottleConfiguration(t *testing.T) {
	if !slices.Contains(defaultConfigs(), "otelretry-throttle") {
		t.Fatal("otelretry-throttle is not in the default run")
	}
	o := defaultOptions()
	o.configs = []string{"otelretry", "otelretry-throttle"}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	send := func(client *http.Client, ops int) int32 {
		requests.Store(0)
		for range ops {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		return requests.Load()
	}
	plain, base := configs["otelretry"].client(o)
	defer base.CloseIdleConnections()
	if n := send(plain, 1); n < 2 {
		t.Errorf("otelretry: %d requests for one operation, want a retry", n)
	}
	throttled, base := configs["otelretry-throttle"].client(o)
	defer base.CloseIdleConnections()
	if n := send(throttled, 100); n >= 100 {
		t.Errorf("otelretry-throttle: %d requests for 100 operations, want fewer: the throttle refuses some", n)
	}
	fresh, base := configs["otelretry-throttle"].client(o)
	defer base.CloseIdleConnections()
	if n := send(fresh, 1); n < 1 {
		t.Errorf("a fresh otelretry-throttle client sent %d requests, want its first: throttles are per client", n)
	}
}
