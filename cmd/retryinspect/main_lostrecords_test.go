// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/internal/scripted"
)

func fanOutUnderOneID(t *testing.T, e *sceneEnv, p perPath, method string, urls ...string) {
	rt := e.transport(p, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
	ctx := otelretry.WithOperationID(e.ctx, "job-1")
	var fns []func()
	for _, u := range urls {
		fns = append(fns, func() { send(t, rt, ctx, method, u) })
	}
	atOnce(fns...)
}

// findingTexts lists the report's findings of data.
func findingTexts(t *testing.T, data []byte) ([]string, *inspect.Report) {
	t.Helper()
	_, rep, _ := reportJSON(t, data)
	var fs []string
	for _, f := range rep.Findings {
		fs = append(fs, string(f.Code)+": "+f.Seen)
	}
	return fs, rep
}

// twoGETsAtOnce is a fan-out of 2 GETs under one id (/a, /b), each retried once:
// the transport numbers /a 1 and 3, /b 2 and 4.
func twoGETsAtOnce(t *testing.T) sceneRun {
	return runScene(t, func(t *testing.T, e *sceneEnv) {
		p := perPath{"/a": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200))}
		fanOutUnderOneID(t, e, p, "GET", "http://orders.test/a", "http://orders.test/b")
	})
}

// On a lost operation span of a fan-out under one id,
// the run's numbers no longer read as a gap; "only the lost span or record
// is reported". With 2 operations in the fan-out, the one left (numbers 1
// and 3) is read alone and its numbers as a gap.
func TestAFanOutOfTwoLostOperationSpanIsNoGap(t *testing.T) {
	r := twoGETsAtOnce(t)
	fs, rep := findingTexts(t, dropNth(t, r.spans, 0, `"Key":"retry.outcome"`, `"Value":"http://orders.test/b"`))
	if findingCodes(rep)["missing-operation-span"] != 1 || len(fs) != 1 {
		t.Errorf("findings:\n  %s\nwant only one missing-operation-span", strings.Join(fs, "\n  "))
	}
}

// The same from log records: /b's retry.operation record lost is a
// needs-spans note, never a finding.
func TestAFanOutOfTwoLostOperationRecordIsNoFinding(t *testing.T) {
	r := twoGETsAtOnce(t)
	fs, _ := findingTexts(t, dropNth(t, r.logs, 0, `"eventName":"retry.operation"`, `"http://orders.test/b"`))
	if len(fs) != 0 {
		t.Errorf("findings:\n  %s\nwant none (a lost record is a needs-spans note)", strings.Join(fs, "\n  "))
	}
}

// A fan-out of 3 GETs under one id, 2 of them to /a: /b's records tell
// their operation by URL, and /a's are never /b's (docs/retryinspect.md:
// a record is joined to the operation of its time, method and URL).
func TestAFanOutSameURLRecordsAreNotJoinedToAnotherURL(t *testing.T) {
	r := threeGETsAtOnce(t)
	for _, name := range []string{"spans", "logs"} {
		data := r.spans
		if name == "logs" {
			data = r.logs
		}
		_, rep := findingTexts(t, data)
		for _, op := range rep.Operations {
			if op.URL == "http://orders.test/b" && len(op.Attempts) != 2 {
				var d []string
				for _, at := range op.Attempts {
					d = append(d, at.Decision)
				}
				t.Errorf("%s: GET /b holds %d attempts %v; it sent 2 (retry, return)", name, len(op.Attempts), d)
			}
		}
	}
}

func threeGETsAtOnce(t *testing.T) sceneRun {
	return runScene(t, func(t *testing.T, e *sceneEnv) {
		p := perPath{"/a": scripted.New(step(10, 503), step(12, 503), step(10, 200), step(10, 200)), "/b": scripted.New(step(15, 503), step(10, 200))}
		fanOutUnderOneID(t, e, p, "GET", "http://orders.test/a", "http://orders.test/a", "http://orders.test/b")
	})
}

// The same fan-out with the retry.operation record of one /a lost (either):
// its attempt records are no longer joined to
// another operation (no false attempt-count-mismatch); only the lost record
// is reported (a needs-spans note).
func TestAFanOutSameURLLostOperationRecordIsNoFinding(t *testing.T) {
	r := threeGETsAtOnce(t)
	for i := range 2 {
		fs, _ := findingTexts(t, dropNth(t, r.logs, i, `"eventName":"retry.operation"`, `"http://orders.test/a"`))
		if len(fs) != 0 {
			t.Errorf("record %d of /a lost: findings:\n  %s\nwant none", i, strings.Join(fs, "\n  "))
		}
	}
}

// A fan-out where /b outlasts /a, and /c starts after /a ended (/b in flight
// together with both): /b's operation span or record lost. Only the lost
// span is reported (missing-operation-span), from logs nothing but a note.
func TestAFanOutBridgeLostIsOnlyTheLostOne(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		p := perPath{"/a": scripted.New(step(10, 503), step(10, 200)), "/b": scripted.New(step(15, 503), step(60, 200)), "/c": scripted.New(step(10, 503), step(10, 200))}
		rt := e.transport(p, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
		ctx := otelretry.WithOperationID(e.ctx, "job-1")
		atOnce(func() { send(t, rt, ctx, "GET", "http://orders.test/a") }, func() { send(t, rt, ctx, "GET", "http://orders.test/b") },
			func() {
				<-time.After(60 * time.Millisecond) // virtual time: /c starts after /a ended
				send(t, rt, ctx, "GET", "http://orders.test/c")
			})
	})
	for _, data := range [][]byte{r.spans, r.logs} {
		if fs, _ := findingTexts(t, data); len(fs) != 0 {
			t.Fatalf("nothing lost: findings %v", fs)
		}
	}
	fs, rep := findingTexts(t, dropNth(t, r.spans, 0, `"Key":"retry.outcome"`, `"Value":"http://orders.test/b"`))
	if findingCodes(rep)["missing-operation-span"] != 1 || len(fs) != 1 {
		t.Errorf("spans, /b's operation span lost: findings:\n  %s\nwant only one missing-operation-span", strings.Join(fs, "\n  "))
	}
	fs, _ = findingTexts(t, dropNth(t, r.logs, 0, `"eventName":"retry.operation"`, `"http://orders.test/b"`))
	if len(fs) != 0 {
		t.Errorf("logs, /b's retry.operation record lost: findings:\n  %s\nwant none", strings.Join(fs, "\n  "))
	}
}

// A fan-out of 3 GETs (/a, /b, /c) under one id whose first operation's
// (/a's) retry.operation record was lost: its attempt records (numbers 1
// and 4) stay apart as the lost operation's, which is no gap ("only the lost span or record is reported"); the last
// one's (/c's) lost record already is no finding.
func TestAFanOutFirstLostOperationRecordIsNoFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOut(t, e, "GET", map[string][]scripted.Step{"/a": {step(10, 503), step(10, 200)}, "/b": {step(15, 503), step(10, 200)}, "/c": {step(20, 503), step(10, 200)}})
	})
	for _, url := range []string{"http://orders.test/a", "http://orders.test/c"} {
		fs, _ := findingTexts(t, dropNth(t, r.logs, 0, `"eventName":"retry.operation"`, `"`+url+`"`))
		if len(fs) != 0 {
			t.Errorf("%s's retry.operation record lost: findings:\n  %s\nwant none", url, strings.Join(fs, "\n  "))
		}
	}
}
