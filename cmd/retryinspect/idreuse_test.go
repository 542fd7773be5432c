// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A job loop that (wrongly) creates WithOperationID(ctx, "job") per call,
// each a fresh count from attempt 1: operation-id-reused. One trace. From
// log records, numbered across the id's operations (a count that goes on),
// every attempt went to the first operation, with findings the spans did
// not have.
func TestAnIDReusedPerCallFromLogsAsFromSpans(t *testing.T) {
	for _, delay := range []time.Duration{0, 300 * time.Microsecond, time.Millisecond, 10 * time.Millisecond} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Delay: delay, Status: http.StatusServiceUnavailable}, scripted.Step{Delay: delay, Status: http.StatusOK}), func(t *testing.T, c *http.Client, ctx context.Context) {
				for range 2 {
					req, _ := http.NewRequestWithContext(otelretry.WithOperationID(ctx, "job"), http.MethodGet, "http://a.test/x", nil)
					do(t, c, req)
				}
			})
			logsReadLikeSpans(t, spans, logs)
		})
	}
}

func TestAnIDReusedPerCallOnTheRealClock(t *testing.T) {
	for i := range 5 { // the real clock: orders vary from run to run
		spans, logs := realClockRun(t, scripted.New(scripted.Step{Status: http.StatusServiceUnavailable}, scripted.Step{Status: http.StatusOK}), func(t *testing.T, c *http.Client, ctx context.Context) {
			for range 3 {
				req, _ := http.NewRequestWithContext(otelretry.WithOperationID(ctx, "job"), http.MethodGet, "http://a.test/x", nil)
				do(t, c, req)
			}
		})
		t.Run(fmt.Sprint(i), func(t *testing.T) { logsReadLikeSpans(t, spans, logs) })
	}
}

// The same loop, each call answered 200 in 0.3 ms (virtual time, so
// exactly): the second job's operation starts 0.3 ms after the first's
// began; distinct times, no tie.
func TestAnIDReusedPerCallWithinAMillisecond(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Delay: 300 * time.Microsecond, Status: http.StatusOK}), func(t *testing.T, c *http.Client, ctx context.Context) {
		for range 2 {
			req, _ := http.NewRequestWithContext(otelretry.WithOperationID(ctx, "job"), http.MethodGet, "http://a.test/x", nil)
			do(t, c, req)
		}
	})
	logsReadLikeSpans(t, spans, logs)
}
