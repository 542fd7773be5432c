// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A redirect's hop is an operation of its own, its 3xx a success that
// gives back half a token, and the failing hop after it costs one: a
// stream of requests redirected to a failing host of the same key earns
// no retry after the fresh host's two, as docs/budget.md says (a
// reviewer's question: does each 3xx fund retries?).
func TestRedirectsToAFailingHostEarnNoRetries(t *testing.T) {
	var failing atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/from" {
			http.Redirect(w, r, "/to", http.StatusTemporaryRedirect)
			return
		}
		failing.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	const chains = 20
	for range chains {
		resp, err := client.Get(srv.URL + "/from")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want the failing host's 503", resp.StatusCode)
		}
	}
	if got, want := failing.Load(), int32(chains+2); got != want {
		t.Errorf("the failing host got %d requests for %d redirected ones, want %d: the fresh host's 2 retries, then none", got, chains, want)
	}
}
