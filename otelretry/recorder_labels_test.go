// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithServerAddressInMetrics: "one set of series per host". The budget,
// the hedge rate, the throttle and retryinspect take API.Test., api.test.
// and api.test for one host (docs/budget.md: "in lower case and without a
// trailing dot, so API.example.com. is the same dependency"); the metric
// label split it into three. An IPv6 literal's spellings, [::1] and
// [0:0:0:0:0:0:0:1], split it too (a reviewer's find).
func TestTheMetricsServerAddressIsOneLabelPerHost(t *testing.T) {
	for _, spellings := range [][]string{
		{"http://API.Test./items", "http://api.test./items", "http://api.test/items"},
		{"http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::0001]/", "http://[0::1]:80/"},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithServerAddressInMetrics())
			for _, u := range spellings {
				resp, err := h.client.Do(get(t, t.Context(), u))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			var labels []string
			for _, s := range retryDataPointAttributes(h.collect(t))["retry.operations"] {
				v, _ := s.Value(attrs.ServerAddressKey)
				labels = append(labels, v.AsString())
			}
			slices.Sort(labels)
			if labels = slices.Compact(labels); len(labels) != 1 {
				t.Errorf("retry.operations server.address labels %q for one host, want one", labels)
			}
		})
	}
}
