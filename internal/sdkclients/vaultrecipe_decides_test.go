// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// cancelAfter calls next, then cancels the caller's context before it
// hands back next's answer: the caller's context is done when the
// client's CheckRetry reads otelretry's error.
type cancelAfter struct {
	next   http.RoundTripper
	cancel context.CancelFunc
}

func (c cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	c.cancel()
	return resp, err
}

// TestVaultDecidesKeepsOtelretrysErrorOnceTheContextIsDone: a read whose
// every attempt lost its connection (otelretry ends it max_attempts, an
// error another try may help), and the caller's context done by then.
// otelretryDecides (vaultrecipe.go) keeps otelretry's error "also once the
// caller's context is done": one client try, and the caller gets
// otelretry's error, not the context's.
func TestVaultDecidesKeepsOtelretrysErrorOnceTheContextIsDone(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { drop(w) })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	config := api.DefaultConfig()
	if config.Error != nil {
		t.Fatal(config.Error)
	}
	config.Address = f.URL
	config.MinRetryWait, config.MaxRetryWait = 10*time.Millisecond, 10*time.Millisecond
	config.HttpClient.Transport = otelretry.NewTransport(config.HttpClient.Transport, testOptions()...)
	config.CheckRetry = otelretryDecides
	rt := &tries{next: cancelAfter{config.HttpClient.Transport, cancel}}
	config.HttpClient.Transport = rt
	c, err := api.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken("a-token")
	_, err = c.Logical().ReadWithContext(ctx, "secret/app")
	got := f.executed("GET /v1/secret/app")
	var oe *otelretry.Error
	t.Logf("dropped read, context done after otelretry's operation: executed %d in %d client tries, err %v", got, rt.n.Load(), err)
	if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeMaxAttempts {
		t.Errorf("error %v: want otelretry's (max_attempts)", err)
	}
	if rt.n.Load() != 1 || got != 3 {
		t.Errorf("executed %d in %d client tries; want 3 in 1", got, rt.n.Load())
	}
}
