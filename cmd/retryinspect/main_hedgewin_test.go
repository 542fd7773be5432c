// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/otelretry"
)

type reviewBase func(*http.Request) (*http.Response, error)

func (f reviewBase) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hedging.md: when no attempt answered and the caller canceled, "the
// attempt judged first records that end and the others in flight
// superseded with reason operation_ended: no attempt won"; retryinspect's
// doc: the hedge win rate is "operations whose winning attempt was a hedge
// / hedged operations", the winner being "the first answer whose verdict
// is not retry". Here the caller cancels a race of two attempts, neither
// answered; the hedge's goroutine happens to report first (the attempt it
// hedged takes a millisecond more to return), so the hedge records
// canceled and the first attempt superseded/operation_ended. retryinspect
// reads the hedge's canceled as its win: hedge win rate 1 of 1, for a race
// nobody won (and 0 of 1 had the other goroutine reported first).
func TestACanceledRaceIsNoHedgeWin(t *testing.T) {
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(25*time.Millisecond, cancel)
		var n atomic.Int32
		base := reviewBase(func(r *http.Request) (*http.Response, error) {
			first := n.Add(1) == 1
			<-r.Context().Done()
			if first {
				time.Sleep(time.Millisecond) // the first attempt returns a little later
			}
			return nil, r.Context().Err()
		})
		rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://inventory.test/items", nil)
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Fatal("the race ended with no error")
		}
	})
	code, out, errOut := runOnFile(t, spans, "-json")
	if errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r inspect.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Dependencies {
		if d.Hedging == nil {
			continue
		}
		t.Logf("%s: hedge rate %s, hedge win rate %s", d.Name, ratioText(d.Hedging.HedgeRate), ratioText(d.Hedging.WinRate))
		if d.Hedging.WinRate.Count != 0 {
			t.Errorf("%s: hedge win rate %s; want 0 won: the caller canceled the race, no attempt answered (operation_ended)",
				d.Name, ratioText(d.Hedging.WinRate))
		}
	}
}
