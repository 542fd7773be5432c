// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The deadline ratio counts the operations that ended deadline_exceeded. A
// write the deadline cut in flight ends check_state (its outcome unknown:
// docs/decisions.md, row 15), counted under that outcome and not in the
// ratio, as the metrics count it; a read the deadline ended is
// (the package doc and docs/telemetry.md say so).
func TestAWriteTheDeadlineCutIsCheckStateNotInTheDeadlineRatio(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		held := scripted.New(step(10_000, 201))
		rt := e.transport(held, otelretry.WithDeadline(200*time.Millisecond))
		if _, err := send(t, rt, e.ctx, http.MethodPost, "http://orders.test/orders"); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("the held write: %v; want its outcome unknown", err)
		}
		rt = e.transport(scripted.New(step(10_000, 200)), otelretry.WithDeadline(200*time.Millisecond))
		if _, err := send(t, rt, e.ctx, http.MethodGet, "http://orders.test/orders/1"); err == nil {
			t.Fatal("the held read: no error; want the deadline's")
		}
	})
	_, rep, _ := reportJSON(t, r.spans)
	compareWithMetrics(t, "a write and a read the deadline cut", r, rep)
	if got := sharesMap(rep.Summary.Outcomes); got["check_state"] != 1 || got["deadline_exceeded"] != 1 {
		t.Errorf("outcomes %v; want check_state 1 (the write), deadline_exceeded 1 (the read)", got)
	}
	if got := rep.Summary.DeadlineRatio; got.Count != 1 || got.Total != 2 {
		t.Errorf("deadline ratio %d of %d; want 1 of 2: the write is check_state", got.Count, got.Total)
	}
}
