// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// An idempotency key's value is recorded only under
// WithIdempotencyKeyValues (docs/telemetry.md): a base's error that prints
// the request's headers keeps no key, whatever its header's name
// (docs/decisions.md's example names it PayPal-Request-Id), as it keeps no
// credential.
func TestAKeysValueInABasesErrorIsNotRecordedWithoutKeyValues(t *testing.T) {
	cases := []struct {
		name   string
		opts   []otelretry.Option
		header []string // the caller's key, when it sets one
	}{
		{name: "generated in PayPal-Request-Id",
			opts: []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "PayPal-Request-Id"})}},
		{name: "the caller's under a contract header X-Request-Id",
			opts:   []otelretry.Option{otelretry.WithIdempotencyKeyContract("X-Request-Id")},
			header: []string{"X-Request-Id", "order-42-caller-chosen-key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			h := newHarness(t, nil)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				sent = append(sent, r.Header.Get("PayPal-Request-Id")+r.Header.Get("X-Request-Id"))
				mu.Unlock()
				return nil, fmt.Errorf("proxy refused the request with %v", r.Header)
			})
			rt := otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithTracerProvider(h.tp),
				otelretry.WithMaxAttempts(1)}, c.opts...)...)
			req := post(t, t.Context(), "http://api.test/orders", `{"sku":"A1"}`)
			for i := 0; i+1 < len(c.header); i += 2 {
				req.Header.Set(c.header[i], c.header[i+1])
			}
			_, err := rt.RoundTrip(req)
			if err == nil {
				t.Fatal("want an error")
			}
			mu.Lock()
			keys := append([]string(nil), sent...)
			mu.Unlock()
			if len(keys) != 1 || keys[0] == "" {
				t.Fatalf("keys on the wire %q, want one", keys)
			}
			texts := []string{"error: " + err.Error()}
			for _, s := range h.ended() {
				texts = append(texts, "span "+s.Name()+" status: "+s.Status().Description)
				for _, kv := range s.Attributes() {
					texts = append(texts, "span "+s.Name()+" "+string(kv.Key)+": "+kv.Value.Emit())
				}
				for _, e := range s.Events() {
					for _, kv := range e.Attributes {
						texts = append(texts, "span "+s.Name()+" event "+e.Name+" "+string(kv.Key)+": "+kv.Value.Emit())
					}
				}
			}
			for _, text := range texts {
				if strings.Contains(text, keys[0]) {
					t.Errorf("the key's value %q is recorded without WithIdempotencyKeyValues: %s", keys[0], text)
				}
			}
		})
	}
}

// Under one WithOperationID, a repeat of a write whose body found the
// buffers' memory held by another write in flight (40 KiB, under the
// 64 KiB per-request limit) cannot be told: the caller's second try after
// a lost answer goes out under a key of its own (WithIdempotencyKeys'
// doc, docs/decisions.md: size the total for the keyed writes in flight).
func TestARepeatWhileTheBuffersAreTakenGetsAKeyOfItsOwn(t *testing.T) {
	var mu sync.Mutex
	applied := map[string]int{}
	stored := map[string]bool{}
	var orders int
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/slow" {
			close(arrived)
			<-release
			w.WriteHeader(http.StatusCreated)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		orders++
		n := orders
		if key == "" || !stored[key] {
			stored[key] = true
			applied[string(body[:16])]++
		}
		mu.Unlock()
		if n == 1 { // the first answer is lost, after the write was applied
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1), otelretry.WithBodyBuffer(64<<10, 64<<10))
	body := func(tag string) string { return tag + strings.Repeat("x", 40<<10-len(tag)) }
	slowDone := make(chan error, 1)
	go func() {
		_, _, err := send(t, client, otelretry.WithOperationID(t.Context(), "upload-A"), http.MethodPost, srv.URL+"/slow", body("upload-A........"))
		slowDone <- err
	}()
	<-arrived // upload-A's buffer holds the memory until it ends
	ctx := otelretry.WithOperationID(t.Context(), "order-B")
	var tries []string
	for range 3 {
		status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", body("order-B........."))
		tries = append(tries, fmt.Sprintf("%d %v", status, err))
		if err == nil && status == http.StatusCreated {
			break
		}
	}
	close(release)
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := applied["order-B........."]; n != 2 || len(stored) != 2 {
		t.Errorf("order-B applied %d times under %d keys, want twice under 2, as documented (tries: %q)", n, len(stored), tries)
	}
}
