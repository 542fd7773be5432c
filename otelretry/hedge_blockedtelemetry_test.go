// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	lognoop "go.opentelemetry.io/otel/log/noop"

	"github.com/otelretry/otelretry-go/otelretry"
)

// supersededBlockingLogs blocks the Emit of a record that holds the value
// "superseded" (a hedge race's loser's) until release is closed.
type supersededBlockingLogs struct {
	embedded.LoggerProvider
	release chan struct{}
}

func (p supersededBlockingLogs) Logger(string, ...log.LoggerOption) log.Logger {
	return supersededBlockingLogger{Logger: lognoop.NewLoggerProvider().Logger(""), release: p.release}
}

type supersededBlockingLogger struct {
	log.Logger
	release chan struct{}
}

func (l supersededBlockingLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

func (l supersededBlockingLogger) Emit(_ context.Context, r log.Record) {
	superseded := false
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		superseded = kv.Value.Emit() == "superseded"
		return !superseded
	})
	if superseded {
		<-l.release
	}
}

// The loser's telemetry is part of its attempt, as docs/hedging.md says: a
// log processor blocking on the superseded attempt's record holds the
// winner's 200 past the operation's deadline, until it returns (a
// reviewer's find: the docs named only a base that ignores its context).
func TestALosersBlockedTelemetryHoldsTheWinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 { // the slow attempt, superseded by its hedge
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
		})
		logs := supersededBlockingLogs{release: make(chan struct{})}
		tr := otelretry.NewTransport(base, otelretry.WithLoggerProvider(logs), otelretry.WithDeadline(2*time.Second),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		type result struct {
			status int
			err    error
		}
		done := make(chan result, 1)
		go func() {
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			if err != nil {
				done <- result{err: err}
				return
			}
			resp.Body.Close()
			done <- result{status: resp.StatusCode}
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("RoundTrip returned (%d, %v) while the loser's log record was blocked", r.status, r.err)
		default:
		}
		close(logs.release)
		if r := <-done; r.err != nil || r.status != 200 {
			t.Errorf("got (%d, %v) once the record returned, want the hedge's 200", r.status, r.err)
		}
	})
}
