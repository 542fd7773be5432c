// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A job of 3 GETs under one WithOperationID in flight together, each 503
// then 200, through a PrepareAttemptFunc that adds a query parameter to
// the attempt's copy (docs/decisions.md: it may change "the URL's path and
// query"; the attempt's url.full is its prepared URL). A clean run of the
// library: retryinspect should find nothing, from spans or log records.
func TestAFanOutWithAPreparedQueryHasNoFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		p := perPath{}
		for i := range 3 {
			p[fmt.Sprintf("/jobs/%d", i)] = scripted.New(step(10, 503), step(10, 200))
		}
		prepare := otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
			q := r.URL.Query()
			q.Set("v", "2")
			r.URL.RawQuery = q.Encode()
			return nil
		})
		rt := e.transport(p, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)), prepare)
		ctx := otelretry.WithOperationID(e.ctx, "job-1")
		var fns []func()
		for path := range p {
			fns = append(fns, func() { send(t, rt, ctx, http.MethodGet, "http://orders.test"+path) })
		}
		atOnce(fns...)
	})
	noFindingFromSpansOrLogs(t, r, "a fan-out of 3 GETs whose attempts carry a prepared query")
}
