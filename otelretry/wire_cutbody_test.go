// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// stallingReadBase reports GetConn, then reads the body, which stalls until
// the attempt's cut closes it; no connection is ever reported. The
// second call answers.
type stallingReadBase struct{ calls atomic.Int32 }

func (b *stallingReadBase) RoundTrip(r *http.Request) (*http.Response, error) {
	n := b.calls.Add(1)
	if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.GetConn != nil {
		tr.GetConn("127.0.0.1:1")
	}
	_, err := io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if n == 1 {
		if err == nil {
			err = r.Context().Err()
		}
		return nil, err
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r, Header: http.Header{}}, nil
}

// The cut's own Close of the body racing the base's Read is no broken
// body: a write cut before the base reported a connection is retried as
// unsent (docs/decisions.md row 26; a reviewer's run, after a broken body
// began to prove nothing).
func TestACutBodyIsNotABrokenBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &stallingReadBase{}
		rt := otelretry.NewTransport(base, otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
			otelretry.WithDeadline(30*time.Second), otelretry.WithAttemptTimeout(time.Second),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		pr, pw := io.Pipe()
		defer pw.Close()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1:1/orders", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader([]byte("order=1"))), nil
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("err = %v (base calls %d); want the retry's 200", err, base.calls.Load())
		}
		resp.Body.Close()
		if n := base.calls.Load(); n != 2 {
			t.Errorf("base called %d times; want 2", n)
		}
	})
}
