// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// reviewHedging is the hedging figures of each dependency in the JSON
// report of data.
func reviewHedging(t *testing.T, data []byte) (map[string]*inspect.DependencyHedging, *inspect.Report) {
	t.Helper()
	code, out, errOut := runOnFile(t, data, "-json")
	if errOut != "" || code == 2 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r inspect.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	h := map[string]*inspect.DependencyHedging{}
	for _, d := range r.Dependencies {
		h[d.Name] = d.Hedging
	}
	return h, &r
}

// A hedged read: one attempt of the race answers 503 while the other is
// in flight (retry, in_flight: the other carries the retry on), and the
// other then gets no answer before the operation's deadline
// (deadline_exceeded) or the caller's cancel (canceled). No attempt
// answered anything but the 503: nobody won the race, the deadline or the
// caller ended it. retryinspect's hedge win rate is "operations whose
// winning attempt was a hedge / hedged operations", the winner "the first
// answer whose verdict is not retry"; "a race that the caller's cancel or
// a deadline ended" has no winner (CHANGELOG, hedging.md). When the
// attempt hedged got the 503, retryinspect counts the hedge's
// deadline_exceeded or canceled, which is no answer, as a hedge win (1 of
// 1); when the hedge got it, 0 of 1.
func TestAHedgeTheDeadlineCutAfterA503IsNoWin(t *testing.T) {
	for _, how := range []string{"deadline", "caller"} {
		for _, who := range []string{"the attempt hedged got the 503", "the hedge got the 503"} {
			t.Run(how+"/"+who, func(t *testing.T) {
				r := runScene(t, func(t *testing.T, e *sceneEnv) {
					steps := []scripted.Step{{Delay: 30 * time.Millisecond, Status: 503}, {Hang: true}}
					if who == "the hedge got the 503" {
						steps = []scripted.Step{{Hang: true}, {Delay: 10 * time.Millisecond, Status: 503}}
					}
					base := scripted.New(steps...)
					sendHedgedRead(t, e, base, how)
					if n := len(base.Calls()); n != 2 {
						t.Fatalf("%d calls, want 2", n)
					}
				})
				for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
					h, rep := reviewHedging(t, data)
					logAttempts(t, name, rep)
					d := h["inventory.test"]
					if d == nil {
						t.Fatalf("%s: no hedging figures", name)
					}
					if d.WinRate.Count != 0 {
						t.Errorf("%s: hedge win rate %s; want 0 won: the hedge got no answer, the %s ended the race", name, ratioText(d.WinRate), how)
					}
				}
			})
		}
	}
}

// A race nobody won (both attempts hang; the caller cancels, or the
// deadline passes), in both orders of the attempts' returns: no finding,
// and no hedge win, from spans and from log records; HTML written.
func TestOperationEndedRaceHeld(t *testing.T) {
	for _, how := range []string{"deadline", "caller"} {
		for _, firstLate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/firstLate=%v", how, firstLate), func(t *testing.T) {
				r := runScene(t, func(t *testing.T, e *sceneEnv) {
					var n atomic.Int32
					base := reviewRT(func(req *http.Request) (*http.Response, error) {
						i := n.Add(1)
						<-req.Context().Done()
						if (i == 1) == firstLate {
							time.Sleep(time.Millisecond)
						}
						return nil, req.Context().Err()
					})
					sendHedgedRead(t, e, base, how)
				})
				for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
					h, rep := reviewHedging(t, data)
					logAttempts(t, name, rep)
					if d := h["inventory.test"]; d == nil || d.WinRate.Count != 0 || d.WinRate.Total != 1 || d.HedgeRate.Count != 1 {
						t.Errorf("%s: hedging %+v", name, d)
					}
					if len(rep.Findings) > 0 {
						t.Errorf("%s: findings %+v", name, rep.Findings)
					}
					code, _, errOut := runOnFile(t, data, "-html", filepath.Join(t.TempDir(), "r.html"))
					if code != exitClean || errOut != "" {
						t.Errorf("%s -html: exit %d %q", name, code, errOut)
					}
				}
			})
		}
	}
}

type reviewRT func(*http.Request) (*http.Response, error)

func (f reviewRT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A hedged read that no attempt answered: the attempt and its hedge both
// hang until the operation's deadline cuts them (deadline_exceeded, and
// superseded with reason operation_ended: "no attempt won"). Both were
// sent and both failed by timeout. retryinspect's headline counts the
// failed attempts by result, leaving out a superseded attempt because
// "a superseded attempt is not a failed one: another attempt won" (doc.go,
// dependency.go); here no other attempt won, and the library itself now
// counts such an attempt as a failure for the throttle (CHANGELOG: "a
// dependency that holds requests looked half as loaded"). The headline
// gives 1 timeout for 2 attempts that timed out.
func TestAnOperationEndedAttemptIsAFailedAttempt(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		base := scripted.New(scripted.Step{Hang: true})
		sendHedgedRead(t, e, base, "deadline")
		if n := len(base.Calls()); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
	})
	for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
		_, rep := reviewHedging(t, data)
		logAttempts(t, name, rep)
		for _, d := range rep.Dependencies {
			t.Logf("%s: %s", name, d.Headline)
			if got := sharesMap(d.FailedAttempts); got["timeout"] != 2 {
				t.Errorf("%s: failed attempts %v; want timeout 2: both attempts were cut by the deadline, none won", name, got)
			}
		}
	}
}

// sendHedgedRead sends a GET hedged after 20 ms, under a 100 ms deadline
// and no budget, that the deadline or the caller's cancel at 60 ms (how)
// ends with an error.
func sendHedgedRead(t *testing.T, e *sceneEnv, base http.RoundTripper, how string) {
	t.Helper()
	rt := e.transport(base, otelretry.WithDeadline(100*time.Millisecond), otelretry.WithoutBudget(),
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
	ctx := e.ctx
	if how == "caller" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(60*time.Millisecond, cancel)
	}
	if _, err := send(t, rt, ctx, http.MethodGet, "http://inventory.test/items"); err == nil {
		t.Fatal("the read returned")
	}
}

// logAttempts logs each attempt of rep's operations, read from name.
func logAttempts(t *testing.T, name string, rep *inspect.Report) {
	t.Helper()
	for _, op := range rep.Operations {
		for _, at := range op.Attempts {
			t.Logf("%s: attempt %d (hedge %v): %s, %s/%s", name, at.Number, at.IsHedge(), at.Result(), at.Decision, at.Reason)
		}
	}
}
