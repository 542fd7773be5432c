// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package baselines

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Naive is the retry loop people write first: a fixed number of attempts,
// a constant pause with no jitter, no budget, retrying 503 and transport
// errors. Give it a per-attempt timeout (WithAttemptTimeout, the operation
// deadline split across the attempts) and a hanging server is retried too.
func Naive(next http.RoundTripper, attempts int, backoff time.Duration) http.RoundTripper {
	return &naive{next: next, attempts: attempts, backoff: backoff}
}

type naive struct {
	next     http.RoundTripper
	attempts int
	backoff  time.Duration
}

func (n *naive) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for i := 1; ; i++ {
		resp, err := n.next.RoundTrip(req)
		retry := err != nil || resp.StatusCode == http.StatusServiceUnavailable
		if !retry || i >= n.attempts || ctx.Err() != nil {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
		if !sleep(ctx, n.backoff) {
			return nil, ctx.Err()
		}
	}
}

// WithAttemptTimeout bounds each request sent through next by d (0: no
// bound), from the send until its response body is closed, so that a
// retry loop above it gives up on a hanging attempt and tries again.
func WithAttemptTimeout(next http.RoundTripper, d time.Duration) http.RoundTripper {
	if d <= 0 {
		return next
	}
	return &attemptTimeout{next: next, d: d}
}

type attemptTimeout struct {
	next http.RoundTripper
	d    time.Duration
}

func (a *attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), a.d)
	resp, err := a.next.RoundTrip(req.WithContext(ctx))
	if resp == nil {
		cancel()
		return resp, err
	}
	// The body is read under the attempt's context: cancel it once the
	// body is closed, not before.
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, err
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
