// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// onEndProcessor calls f for each ended span.
type onEndProcessor struct{ f func(sdktrace.ReadOnlySpan) }

func (p onEndProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p onEndProcessor) OnEnd(s sdktrace.ReadOnlySpan)                   { p.f(s) }
func (p onEndProcessor) Shutdown(context.Context) error                  { return nil }
func (p onEndProcessor) ForceFlush(context.Context) error                { return nil }

// A hedge whose PrepareAttemptFunc makes it unsendable for net/http (a
// header value holding a line break, on attempt 2 only) is never seen by
// the host: as a hedge whose PrepareAttemptFunc returned an error
// (hedge_refused, prepare_failed), it does not end an operation whose
// first attempt, a valid GET, is still in flight and about to answer 200.
// (It won the race as stop, invalid_request: a reviewer's find.)
func TestAHedgeTheTransportRefusesDoesNotCancelTheAttemptItHedges(t *testing.T) {
	release := make(chan struct{})
	var firstCanceled atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "first")
		case <-r.Context().Done():
			firstCanceled.Store(true)
		}
	}))
	defer srv.Close()
	hedgeEnded, hookDone := make(chan struct{}), make(chan struct{})
	var once, hookOnce sync.Once
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(onEndProcessor{func(s sdktrace.ReadOnlySpan) {
		for _, kv := range s.Attributes() {
			if kv.Key == attrs.AttemptKey && kv.Value.AsInt64() == 2 {
				once.Do(func() { close(hedgeEnded) })
			}
		}
	}}))
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}),
		otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
			if attempt == 2 {
				r.Header.Set("X-Signature", "a\nb") // a broken signer, the hedge only
				hookOnce.Do(func() { close(hookDone) })
			}
			return nil
		}))
	type out struct {
		status int
		body   string
		err    error
	}
	done := make(chan out, 1)
	go func() {
		resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
		if err != nil {
			done <- out{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- out{status: resp.StatusCode, body: string(b)}
	}()
	// The hedge is refused at its preparation (no span of its own), or, sent
	// and refused by net/http, concluded; attempt 1 has not answered yet.
	select {
	case <-hedgeEnded:
	case <-hookDone:
	}
	close(release)
	o := <-done
	var oe *otelretry.Error
	if errors.As(o.err, &oe) {
		t.Errorf("RoundTrip = %v (outcome %s, reason %s, %d attempts), attempt 1 canceled: %v; want attempt 1's 200",
			o.err, oe.Outcome, oe.Reason, oe.Attempts, firstCanceled.Load())
	} else if o.err != nil || o.status != 200 || o.body != "first" {
		t.Errorf("RoundTrip = %d %q %v, want attempt 1's 200 \"first\"", o.status, o.body, o.err)
	}
}

// 16 operations in flight together (404 at 50 ms), each hedged after 10 ms while its
// first attempt is slow, each hedge not sent: refused by its
// PrepareAttemptFunc, panicking in it, or still being prepared when its
// race ends. Every token a hedge took is given back exactly once: the host
// ends where 16 unhedged successes leave it, and every call reached the base
// once.
func TestSixteenHedgesNotSentGiveBackTheirTokensOnce(t *testing.T) {
	run := func(t *testing.T, hedging bool, prepare func() error) (available, calls int) {
		budget := &otelretry.Budget{}
		opts := []otelretry.Option{otelretry.WithBudget(budget),
			otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
				if attempt == 2 {
					return prepare()
				}
				return nil
			})}
		if hedging {
			opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		}
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 404}}, opts...)
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				defer func() { _ = recover() }()
				_, _, _ = roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
			})
		}
		wg.Wait()
		time.Sleep(time.Second) // late preparations end
		synctest.Wait()
		return budget.Available(get(t, t.Context(), "http://api.test/items")), len(h.base.Calls())
	}
	for _, tc := range hedgesNotSent {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				want, _ := run(t, false, tc.prepare)
				got, calls := run(t, true, tc.prepare)
				if got != want || calls != 16 {
					t.Errorf("Available = %d, calls = %d; want %d (as without hedging) and 16", got, calls, want)
				}
				if testing.Verbose() {
					t.Logf("Available %d (unhedged %d), calls %d", got, want, calls)
				}
			})
		})
	}
}
