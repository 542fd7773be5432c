// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package baselines

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The comparison budgets: published retry-throttling algorithms, each run
// inside the same retry loop (Budgeted) so that only the budget differs
// from otelretry's defaults: 3 attempts, full-jitter backoff from 100 ms to
// 2 s, no pause the deadline would cut, the same retryable statuses.

// Model is a client-wide retry budget for one dependency (the benchmarks
// have one host, so one state per client).
type Model interface {
	// start is called before an operation's first attempt.
	start(op *opBudget)
	// failed reports an attempt that failed with a retryable status or a
	// transport error; wantRetry says whether the loop would retry it
	// (attempts and deadline left). It returns whether the retry may go.
	failed(op *opBudget, timeout, wantRetry bool) bool
	// succeeded reports an operation's 2xx or 3xx answer at attempt n.
	succeeded(op *opBudget, n int)
}

// opBudget is what a model remembers of one operation.
type opBudget struct {
	retryCost int // AWS: the cost of the retry token held, refunded on success
}

// grpcThrottle is gRPC's retry throttling (gRFC A6, as grpc-go implements
// it): tokens start at maxTokens; each failed attempt takes one (not below
// 0); each successful call gives back tokenRatio (not above maxTokens); a
// retry is allowed only while tokens stay above maxTokens/2 after the
// failure's decrement. The parameters are A6's example: 10 and 0.1.
type grpcThrottle struct {
	mu                sync.Mutex
	max, ratio, token float64
}

// NewGRPCThrottle returns gRPC's retry throttling with A6's example
// parameters.
func NewGRPCThrottle() Model { return newGRPCThrottle() }

func newGRPCThrottle() *grpcThrottle { return &grpcThrottle{max: 10, ratio: 0.1, token: 10} }

func (g *grpcThrottle) start(*opBudget) {}

func (g *grpcThrottle) failed(_ *opBudget, _, wantRetry bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.token = max(g.token-1, 0)
	return wantRetry && g.token > g.max/2
}

func (g *grpcThrottle) succeeded(*opBudget, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.token = min(g.token+g.ratio, g.max)
}

// awsQuota is the retry quota of the AWS SDKs' standard retry mode: a
// bucket of 500 tokens; a retry takes 5 (10 after a timeout) and is refused
// when they are not there; a call that succeeds gives back the cost of its
// last retry, or 1 when it succeeded without a retry; never above 500.
type awsQuota struct {
	mu     sync.Mutex
	tokens int
}

const (
	awsCapacity         = 500
	awsRetryCost        = 5
	awsTimeoutRetryCost = 10
	awsNoRetryIncrement = 1
)

// NewAWSQuota returns the AWS SDKs' standard retry quota.
func NewAWSQuota() Model { return newAWSQuota() }

func newAWSQuota() *awsQuota { return &awsQuota{tokens: awsCapacity} }

func (a *awsQuota) start(op *opBudget) { op.retryCost = 0 }

func (a *awsQuota) failed(op *opBudget, timeout, wantRetry bool) bool {
	if !wantRetry {
		return false
	}
	cost := awsRetryCost
	if timeout {
		cost = awsTimeoutRetryCost
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tokens < cost {
		return false
	}
	a.tokens -= cost
	op.retryCost = cost
	return true
}

func (a *awsQuota) succeeded(op *opBudget, n int) {
	give := awsNoRetryIncrement
	if n > 1 {
		give = op.retryCost
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens = min(a.tokens+give, awsCapacity)
}

// windowedBudget is otelretry's budget up to v0.1, ported as it was: within
// a sliding window of 10 s (ten slots), retries that did not succeed may
// not exceed the larger of 10% of first attempts and a floor of 10, and the
// same bound holds within the last 2 s; a retry is charged when sent and
// refunded when it gets a 2xx or 3xx answer.
type windowedBudget struct {
	ratioMilli, minRetries int64
	slotWidth              time.Duration
	start0                 time.Time
	slots                  [windowSlots]windowSlot
}

const (
	windowSlots = 10
	burstSlots  = 2
)

type windowSlot struct {
	epoch                          atomic.Int64 // epoch+1 of the counts held; 0 = never used
	deposits, withdrawals, refunds atomic.Int64
}

type windowCounts struct{ deposits, charged int64 }

// NewWindowedBudget returns otelretry's v0.1 budget.
func NewWindowedBudget() Model { return newWindowedBudget() }

func newWindowedBudget() *windowedBudget {
	return &windowedBudget{ratioMilli: 100, minRetries: 10, slotWidth: time.Second, start0: time.Now()}
}

func (w *windowedBudget) epoch() int64 { return max(int64(time.Since(w.start0)/w.slotWidth), 0) }

func (w *windowedBudget) slot(e int64) *windowSlot {
	s := &w.slots[e%windowSlots]
	if old := s.epoch.Load(); old != e+1 && s.epoch.CompareAndSwap(old, e+1) {
		s.deposits.Store(0)
		s.withdrawals.Store(0)
		s.refunds.Store(0)
	}
	return s
}

func (w *windowedBudget) counts(e int64) (whole, recent windowCounts) {
	for i := range w.slots {
		s := &w.slots[i]
		se := s.epoch.Load() - 1
		if se < 0 || se > e || e-se >= windowSlots {
			continue
		}
		c := windowCounts{s.deposits.Load(), s.withdrawals.Load() - s.refunds.Load()}
		whole.deposits, whole.charged = whole.deposits+c.deposits, whole.charged+c.charged
		if e-se < burstSlots {
			recent.deposits, recent.charged = recent.deposits+c.deposits, recent.charged+c.charged
		}
	}
	return whole, recent
}

func (w *windowedBudget) left(c windowCounts) int64 {
	allowed := max(c.deposits*w.ratioMilli, w.minRetries*1000) / 1000
	return max(allowed-max(c.charged, 0), 0)
}

func (w *windowedBudget) start(*opBudget) { w.slot(w.epoch()).deposits.Add(1) }

func (w *windowedBudget) failed(_ *opBudget, _, wantRetry bool) bool {
	if !wantRetry {
		return false
	}
	e := w.epoch()
	whole, recent := w.counts(e)
	if w.left(whole) < 1 || w.left(recent) < 1 {
		return false
	}
	w.slot(e).withdrawals.Add(1)
	return true
}

func (w *windowedBudget) succeeded(_ *opBudget, n int) {
	if n > 1 {
		w.slot(w.epoch()).refunds.Add(1)
	}
}

// budgeted is the retry loop the comparison budgets run in: otelretry's
// default bounds without otelretry.
type budgeted struct {
	next     http.RoundTripper
	model    Model
	attempts int
	backoff  otelretry.Backoff
}

// NewBudgeted returns the retry loop with otelretry's default bounds
// around next (3 attempts, ExponentialBackoff(100ms, 2s)), its retries
// admitted by m.
func NewBudgeted(next http.RoundTripper, m Model) http.RoundTripper {
	return &budgeted{next: next, model: m, attempts: 3,
		backoff: otelretry.ExponentialBackoff(100*time.Millisecond, 2*time.Second)}
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func (b *budgeted) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var op opBudget
	b.model.start(&op)
	for n := 1; ; n++ {
		resp, err := b.next.RoundTrip(req)
		if ctx.Err() != nil {
			// The caller's deadline or cancellation: not the dependency's
			// failure, and nothing more to do.
			return resp, err
		}
		var timeout bool
		switch {
		case err == nil && resp.StatusCode < 400:
			b.model.succeeded(&op, n)
			return resp, nil
		case err == nil && !retryableStatus(resp.StatusCode):
			return resp, nil
		case err != nil:
			var te interface{ Timeout() bool }
			timeout = errors.As(err, &te) && te.Timeout()
		}
		pause := b.backoff(n, otelretry.Answer{})
		dl, hasDL := ctx.Deadline()
		want := n < b.attempts && (!hasDL || time.Until(dl) > pause)
		if !b.model.failed(&op, timeout, want) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
		if !sleep(ctx, pause) {
			return nil, ctx.Err()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
