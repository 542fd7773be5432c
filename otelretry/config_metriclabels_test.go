// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithMetricAttributes labels the retry metrics only; otelhttp's own
// http.client.request.duration, which the attempts' CLIENT spans come
// with, takes the client Labeler of the request's context
// (otelhttp.ContextWithClientLabeler), which otelretry hands to every
// attempt (its godoc says so; a reviewer, as a new user, looked for the
// label there).
func TestOtelhttpsMetricsTakeTheLabelerOfTheRequestsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tier := attribute.String("tenant.tier", "gold")
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithMetricAttributes(func(*http.Request) []attribute.KeyValue { return []attribute.KeyValue{tier} }))
		labeler := &otelhttp.Labeler{}
		labeler.Add(attribute.String("tenant.region", "eu"))
		resp, err := h.client.Do(get(t, otelhttp.ContextWithClientLabeler(t.Context(), labeler), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		points := map[string][2]int{} // instrument: points with the tier, with the region
		for _, sm := range h.collect(t).ScopeMetrics {
			for _, m := range sm.Metrics {
				for _, set := range attributeSets(m) {
					p := points[m.Name]
					if v, ok := set.Value("tenant.tier"); ok && v.AsString() == "gold" {
						p[0]++
					}
					if v, ok := set.Value("tenant.region"); ok && v.AsString() == "eu" {
						p[1]++
					}
					points[m.Name] = p
				}
			}
		}
		if p := points["retry.attempts"]; p[0] == 0 {
			t.Errorf("retry.attempts: %v points with the tier; want some", p)
		}
		if p := points["http.client.request.duration"]; p[0] != 0 || p[1] != 2 {
			t.Errorf("http.client.request.duration: %d points with the tier, %d with the region; want 0 and 2 (one per attempt)", p[0], p[1])
		}
	})
}
