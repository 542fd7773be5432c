// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The memory keeps a write's key once the write did not succeed: the same
// write sent again while the first is still in flight (a layer above that
// hedges writes) gets a key of its own, as docs/decisions.md says, and may
// be applied twice; such a layer gives its tries a key of its own (a
// reviewer found the docs silent on it).
func TestARepeatSentWhileTheFirstIsInFlightGetsAKeyOfItsOwn(t *testing.T) {
	keys := make(chan string, 2)
	release := make(chan struct{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		keys <- r.Header.Get("Idempotency-Key")
		if r.Header.Get("X-First") != "" {
			<-release
		}
		return &http.Response{StatusCode: 201, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
	ctx := otelretry.WithOperationID(t.Context(), "order-42")
	post := func(first bool) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", strings.NewReader(`{"sku":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if first {
			req.Header.Set("X-First", "1")
		}
		return req
	}
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(post(true))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	firstKey := <-keys
	resp, err := tr.RoundTrip(post(false))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if second := <-keys; firstKey == "" || second == "" || second == firstKey {
		t.Fatalf("keys %q and %q: want two keys of their own", firstKey, second)
	}
}
