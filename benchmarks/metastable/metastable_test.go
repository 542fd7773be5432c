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

	"github.com/otelretry/otelretry-go/otelretry"
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

// The throttle's slot: empty, its configuration is neither run by
// default nor accepted; filled, it runs otelretry with the slot's options,
// a fresh set per client.
func TestThrottleSlot(t *testing.T) {
	if throttleOptions != nil {
		t.Skip("the slot is filled")
	}
	if slices.Contains(defaultConfigs(), "otelretry-throttle") {
		t.Fatal("otelretry-throttle runs by default with its slot empty")
	}
	o := defaultOptions()
	o.configs = []string{"otelretry-throttle"}
	if err := o.normalize(); err == nil {
		t.Fatal("otelretry-throttle accepted with its slot empty")
	}

	calls := 0
	throttleOptions = func() []otelretry.Option {
		calls++
		return []otelretry.Option{otelretry.WithMaxAttempts(1)}
	}
	defer func() { throttleOptions = nil }()
	if !slices.Contains(defaultConfigs(), "otelretry-throttle") {
		t.Fatal("otelretry-throttle left out with its slot filled")
	}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	// Against a server answering 503, otelretry retries; with the slot's
	// options (here one attempt at most) it does not.
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	send := func(name string) int32 {
		requests.Store(0)
		client, base := configs[name].client(o)
		defer base.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
		return requests.Load()
	}
	if n := send("otelretry"); n < 2 {
		t.Errorf("otelretry: %d requests, want a retry", n)
	}
	if n := send("otelretry-throttle"); n != 1 {
		t.Errorf("otelretry-throttle: %d requests, want 1 (the slot's options)", n)
	}
	if calls != 1 {
		t.Errorf("the slot was called %d times for one client, want 1", calls)
	}
}
