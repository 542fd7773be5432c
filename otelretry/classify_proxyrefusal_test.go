// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A proxy's refusal of its CONNECT proves the request never reached the
// origin (net/http took no connection for it): a write is retried,
// not_processed, as after a dial error, and each retry meets the proxy
// again (docs/decisions.md, row 26; a reviewer's remark: the table did not
// say so).
func TestAProxysRefusalOfItsConnectLeavesTheWriteUnsent(t *testing.T) {
	proxy := refusingProxy(t, "Proxy Authentication Required")
	rec, opts := tracingProviders()
	base := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base,
		append(opts, otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))...)}
	_, err := client.Post("https://api.test/orders", "application/json", strings.NewReader(`{"n":1}`))
	if err == nil {
		t.Fatal("no error")
	}
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) != 2 {
		t.Fatalf("%d attempts, want 2 (the write resent once the proxy refused it)", len(attempts))
	}
	decision, _ := spantest.Attr(attempts[0], "retry.decision")
	reason, _ := spantest.Attr(attempts[0], "retry.reason")
	if decision.AsString() != "retry" || reason.AsString() != "not_processed" {
		t.Errorf("first attempt %s/%s, want retry/not_processed", decision.AsString(), reason.AsString())
	}
}
