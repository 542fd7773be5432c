// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// fanOutFailing runs a job of n GETs under one WithOperationID, in
// flight together, each answered 503 then 200 (its own script), where the
// PrepareAttemptFunc fails the preparations of path /jobs/bad that fail
// says of (1 for its first, 2 for its second).
func fanOutFailing(t *testing.T, e *sceneEnv, n int, fail func(prepared int) bool) {
	t.Helper()
	p := perPath{}
	for i := range n {
		path := fmt.Sprintf("/jobs/%d", i)
		if i == 2 {
			path = "/jobs/bad"
		}
		p[path] = scripted.New(step(10, 503), step(10, 200))
	}
	var mu sync.Mutex
	bad := 0
	prepare := otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		if !strings.HasSuffix(r.URL.Path, "/bad") {
			return nil
		}
		mu.Lock()
		bad++
		k := bad
		mu.Unlock()
		if fail(k) {
			return errors.New("signer down")
		}
		return nil
	})
	rt := e.transport(p, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)), prepare)
	ctx := otelretry.WithOperationID(e.ctx, "job-1")
	var wg sync.WaitGroup
	for path := range p {
		wg.Go(func() { send(t, rt, ctx, http.MethodGet, "http://orders.test"+path) })
	}
	wg.Wait()
}

// A job of 8 GETs under one id in flight together, one of which the
// PrepareAttemptFunc stops before its first call (stop, prepare_failed:
// a documented outcome, no call made). Nothing was lost: retryinspect
// should find nothing in its spans.
func TestAFanOutWithAFirstPreparationFailedHasNoFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOutFailing(t, e, 8, func(int) bool { return true })
	})
	code, rep, _ := reportJSON(t, r.spans)
	logAttempts(t, "spans", rep)
	if got := findingCodes(rep); len(got) != 0 {
		t.Errorf("spans: exit %d, findings %s on a clean fan-out of 8 GETs, one stopped before its first call (prepare_failed)\n%+v", code, mapText(got), rep.Findings)
	}
}

// The same fan-out, where the PrepareAttemptFunc stops the retry of one
// operation (stop, prepare_failed after a 503): the operation records the
// call planned as retry.abandoned_attempt. retryinspect should find
// nothing.
func TestAFanOutWithARetryAbandonedHasNoFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOutFailing(t, e, 8, func(k int) bool { return k == 2 })
	})
	code, rep, _ := reportJSON(t, r.spans)
	logAttempts(t, "spans", rep)
	if got := findingCodes(rep); len(got) != 0 {
		t.Errorf("spans: exit %d, findings %s on a clean fan-out of 8 GETs, one whose retry was abandoned (prepare_failed)\n%+v", code, mapText(got), rep.Findings)
	}
}
