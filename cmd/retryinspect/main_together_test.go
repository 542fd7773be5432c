// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// at once runs fns in flight together and waits for them.
func atOnce(fns ...func()) {
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(f)
	}
	wg.Wait()
}

func togetherScenes() []scenario {
	job := func(e *sceneEnv) context.Context { return otelretry.WithOperationID(e.ctx, "job-1") }
	nb := []otelretry.Option{otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20 * time.Millisecond))}
	return []scenario{
		{name: "late-close-loop", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(step(10, 503), step(10, 200), step(10, 503), step(10, 200), step(10, 503), step(10, 200)), nb...)
			ctx := job(e)
			var bodies []io.Closer
			for range 3 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://orders.test/a", nil)
				resp, err := (&http.Client{Transport: rt}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				bodies = append(bodies, resp.Body)
			}
			for _, b := range bodies {
				b.Close()
			}
		}},
		{name: "fanout-then-sequential", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200)),
				"/c": scripted.New(step(20, 503), step(10, 200)), "/d": scripted.New(step(10, 503), step(10, 200))}
			rt := e.transport(p, nb...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") },
				func() { send(t, rt, ctx, "GET", "http://orders.test/c") })
			send(t, rt, ctx, "GET", "http://orders.test/d")
		}},
		{name: "sequential-then-fanout", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200)),
				"/c": scripted.New(step(20, 503), step(10, 200)), "/d": scripted.New(step(10, 503), step(10, 200))}
			rt := e.transport(p, nb...)
			ctx := job(e)
			send(t, rt, ctx, "GET", "http://orders.test/d")
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") },
				func() { send(t, rt, ctx, "GET", "http://orders.test/c") })
		}},
		{name: "two-fanouts", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(10, 503), step(10, 200), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200), step(12, 503), step(10, 200))}
			rt := e.transport(p, nb...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") })
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") })
		}},
		{name: "fanout-one-hedged", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(100, 200), step(10, 200)), "/b": scripted.New(step(10, 503), step(10, 200)),
				"/c": scripted.New(step(20, 200))}
			rt := e.transport(p, append(nb, otelretry.WithHedging(otelretry.Hedging{Delay: 30 * time.Millisecond}))...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") },
				func() { send(t, rt, ctx, "GET", "http://orders.test/c") })
		}},
		{name: "fanout-one-redirected", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(scripted.Step{Delay: 10 * time.Millisecond, Status: 302, Header: http.Header{"Location": {"/a2"}}}),
				"/a2": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200)),
				"/c": scripted.New(step(20, 503), step(10, 200))}
			rt := e.transport(p, nb...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") },
				func() { send(t, rt, ctx, "GET", "http://orders.test/c") })
		}},
		{name: "fanout-mixed-methods-one-url", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(10, 503), step(15, 503), step(10, 200), step(10, 201))}
			rt := e.transport(p, append(nb, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "POST", "http://orders.test/a") })
		}},
		{name: "fanout-keyed-post-timeout", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(scripted.Step{Hang: true}, step(10, 201)), "/b": scripted.New(step(15, 503), step(10, 201)),
				"/c": scripted.New(step(20, 201))}
			rt := e.transport(p, append(nb, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(time.Second))...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "POST", "http://orders.test/a") }, func() { send(t, rt, ctx, "POST", "http://orders.test/b") },
				func() { send(t, rt, ctx, "POST", "http://orders.test/c") })
		}},
		{name: "fanout-post-checkstate-notapplied", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(scripted.Step{Hang: true}, step(10, 201)), "/b": scripted.New(step(15, 503), step(10, 201)),
				"/c": scripted.New(step(20, 201))}
			rt := e.transport(p, append(nb, otelretry.WithStateCheck(stateCheckAnswering(attrs.StateNotApplied)), otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(time.Second))...)
			ctx := otelretry.WithIntent(job(e), otelretry.Intent{Repeatable: true})
			atOnce(func() { send(t, rt, ctx, "POST", "http://orders.test/a") }, func() { send(t, rt, ctx, "PUT", "http://orders.test/b") },
				func() { send(t, rt, ctx, "POST", "http://orders.test/c") })
		}},
		{name: "hook-call-under-job-id", play: func(t *testing.T, e *sceneEnv) {
			side := e.transport(scripted.New(step(5, 200), step(5, 200), step(5, 200)), otelretry.WithoutBudget())
			call := func(a otelretry.Answer) {
				req, _ := http.NewRequestWithContext(a.Request.Context(), http.MethodGet, "http://status.test/health", nil)
				if resp, err := side.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			rt := e.transport(scripted.New(step(10, 503), step(10, 503), step(10, 200)), otelretry.WithoutBudget(),
				otelretry.WithBackoff(func(n int, a otelretry.Answer) time.Duration { call(a); return 10 * time.Millisecond }))
			send(t, rt, job(e), "GET", "http://inventory.test/items")
		}},
		{name: "hook-call-under-job-id-same-transport", play: func(t *testing.T, e *sceneEnv) {
			var rt http.RoundTripper
			call := func(a otelretry.Answer) {
				req, _ := http.NewRequestWithContext(otelretry.WithIntent(a.Request.Context(), otelretry.Intent{NoRetry: true}), http.MethodGet, "http://status.test/health", nil)
				if resp, err := rt.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			p := perPath{"/items": scripted.New(step(10, 503), step(10, 503), step(10, 200)), "/health": scripted.New(step(5, 200), step(5, 200))}
			rt = e.transport(p, otelretry.WithoutBudget(),
				otelretry.WithBackoff(func(n int, a otelretry.Answer) time.Duration {
					if a.Request.URL.Path == "/items" {
						call(a)
					}
					return 10 * time.Millisecond
				}))
			send(t, rt, job(e), "GET", "http://inventory.test/items")
		}},
		{name: "one-instant-same-url-query", play: func(t *testing.T, e *sceneEnv) {
			p := perPath{"/a": scripted.New(step(10, 503), step(12, 503), step(10, 200), step(10, 200))}
			rt := e.transport(p, nb...)
			ctx := job(e)
			atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a?x=1") }, func() { send(t, rt, ctx, "GET", "http://orders.test/a?x=2") })
		}},
	}
}

// Operations of one id in flight together, beside sequential ones,
// hedges, redirects, keyed resends and state checks: no finding, from
// spans or from log records.
func TestScenesOfOneIDInFlightTogetherHaveNoFinding(t *testing.T) {
	for _, sc := range togetherScenes() {
		t.Run(sc.name, func(t *testing.T) {
			noFindingFromSpansOrLogs(t, runScene(t, sc.play), sc.name)
		})
	}
}

// noFindingFromSpansOrLogs wants no finding of retryinspect on the spans
// and on the log records of run r, a clean run (what says which).
func noFindingFromSpansOrLogs(t *testing.T, r sceneRun, what string) {
	t.Helper()
	for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
		if fs, _ := findingTexts(t, data); len(fs) > 0 {
			t.Errorf("%s, from the %s: findings on a clean run:\n  %s\n%s", what, name, strings.Join(fs, "\n  "), textOf(t, data))
		}
	}
}

// dropNth is data (one JSON document a line: OTLP log records, or
// stdouttrace's spans) without the n-th line (from 0) that holds every
// one of subs.
func dropNth(t *testing.T, data []byte, n int, subs ...string) []byte {
	t.Helper()
	var out []string
	seen := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			seen++
			if seen-1 == n {
				continue
			}
		}
		out = append(out, l)
	}
	if seen <= n {
		t.Fatalf("only %d lines hold %q", seen, subs)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// A fan-out of 3 GETs (/a, /b, /c) under one id whose retry.operation
// record of /b was lost: /b's attempt records have no operation of their
// method and URL. docs/retryinspect.md: attempts without their operation
// record are a needs-spans note, never a false finding, and a record is
// joined to the operation of its time, method and URL. They must not be
// joined to /a or /c.
func TestAFanOutLostOperationRecordKeepsItsAttemptsApart(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOut(t, e, http.MethodGet, map[string][]scripted.Step{
			"/a": {step(10, 503), step(10, 200)},
			"/b": {step(15, 503), step(10, 200)},
			"/c": {step(20, 503), step(10, 200)},
		})
	})
	logs := dropNth(t, r.logs, 0, `"eventName":"retry.operation"`, `"http://orders.test/b"`)
	_, rep, _ := reportJSON(t, logs)
	for _, f := range rep.Findings {
		t.Errorf("finding %s: %s", f.Code, f.Seen)
	}
	for _, op := range rep.Operations {
		if (op.URL == "http://orders.test/a" || op.URL == "http://orders.test/c") && len(op.Attempts) != 2 {
			var ids []string
			for _, at := range op.Attempts {
				ids = append(ids, at.RequestID+" "+at.Decision)
			}
			t.Errorf("operation GET %s holds %d attempts (%s); it sent 2: /b's records were joined to it", op.URL, len(op.Attempts), strings.Join(ids, ", "))
		}
	}
	for _, n := range rep.Notes {
		if strings.Contains(n.Seen, "same method and URL") {
			t.Errorf("note %s x%d: %q, but the 3 operations had 3 different URLs", n.Code, n.Count, n.Seen)
		}
	}
}

// The same without the fan-out: 3 sequential GETs under one id, the
// retry.operation record of the second lost: its attempts, whose numbers
// the first's record does not hold, are not joined to it.
func TestASequentialLostOperationRecordIsNoFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		p := perPath{"/a": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200)),
			"/c": scripted.New(step(20, 503), step(10, 200))}
		rt := e.transport(p, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
		ctx := otelretry.WithOperationID(e.ctx, "job-1")
		for _, path := range []string{"/a", "/b", "/c"} {
			send(t, rt, ctx, "GET", "http://orders.test"+path)
		}
	})
	logs := dropNth(t, r.logs, 0, `"eventName":"retry.operation"`, `"http://orders.test/b"`)
	_, rep, _ := reportJSON(t, logs)
	for _, f := range rep.Findings {
		t.Errorf("logs without /b's retry.operation record: finding %s: %s", f.Code, f.Seen)
	}
}

// A fan-out of 3 GETs under one id whose operation span of /b was lost
// (its attempt spans are in the input): that is a missing-operation-span;
// no attempt span was lost, so the run of the 2 operations left is no
// numbering gap.
func TestAFanOutLostOperationSpanIsNoGapOfTheRun(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOut(t, e, http.MethodGet, map[string][]scripted.Step{
			"/a": {step(10, 503), step(10, 200)},
			"/b": {step(15, 503), step(10, 200)},
			"/c": {step(20, 503), step(10, 200)},
		})
	})
	spans := dropNth(t, r.spans, 0, `"Key":"retry.outcome"`, `"Value":"http://orders.test/b"`)
	_, rep, _ := reportJSON(t, spans)
	if findingCodes(rep)["missing-operation-span"] != 1 {
		t.Errorf("findings %s; want one missing-operation-span", mapText(findingCodes(rep)))
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Seen, "in flight together") {
			t.Errorf("finding %s: %s (no attempt span was lost)", f.Code, f.Seen)
		}
	}
}
