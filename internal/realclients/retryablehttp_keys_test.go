// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/otelretry/otelretry-go/otelretry"
)

// go-retryablehttp over otelretry with generated keys, under
// WithOperationID: a body given as an io.ReadSeeker (an *os.File, a
// *strings.Reader) gets a GetBody that rewinds and returns that same
// reader. Every POST reaches the server once, with its payload. (A first
// fix that told a repeat's body by reading a GetBody copy before the
// first attempt sent the file's POST empty and the reader's truncated.)
func TestRetryablehttpKeyedWritesReadSeekerBodyIsSentWhole(t *testing.T) {
	const payload = `{"sku":"A1","qty":3}`
	for name, body := range map[string]func(t *testing.T) any{
		"an *os.File": func(t *testing.T) any {
			f, err := os.Create(filepath.Join(t.TempDir(), "order.json"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if _, err := f.WriteString(payload); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			return f
		},
		"a *strings.Reader": func(*testing.T) any { return strings.NewReader(payload) },
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = append(got, string(b))
				mu.Unlock()
				w.WriteHeader(http.StatusCreated)
			}))
			defer srv.Close()
			tr := otelretry.NewTransport(nil, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
			defer tr.CloseIdleConnections()
			ctx := otelretry.WithOperationID(context.Background(), "op-order-42")
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", body(t))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := outerLayer(tr).Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != payload {
				t.Fatalf("server received bodies %q, want [%q]", got, payload)
			}
		})
	}
}

// gatewayApp applies a write under its Idempotency-Key in the background
// (500ms), behind a gateway that answers 504 after 50ms while the app has
// not answered; a key already applied is answered with the stored 201.
type gatewayApp struct {
	mu      sync.Mutex
	applied int
	done    map[string]chan struct{}
}

func (g *gatewayApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Idempotency-Key")
	g.mu.Lock()
	ch, ok := g.done[key]
	if !ok {
		ch = make(chan struct{})
		g.done[key] = ch
		g.applied++
		time.AfterFunc(500*time.Millisecond, func() { close(ch) })
	}
	g.mu.Unlock()
	select {
	case <-ch:
		w.WriteHeader(http.StatusCreated)
	case <-time.After(50 * time.Millisecond):
		w.WriteHeader(http.StatusGatewayTimeout) // the gateway gave up; the app goes on
	}
}

// A 504 from a gateway leaves the write's outcome open: the app behind it
// may apply it. go-retryablehttp retries the 504 otelretry returns; under
// WithOperationID its tries carry the one generated key, and the app
// applies the order once. (A first fix kept a key only for an outcome
// otelretry calls unknown, which an answered 504 is not: each try got a
// key of its own, and the app applied the order five times.)
func TestRetryablehttpKeyedWriteAfterAGateway504KeepsItsKey(t *testing.T) {
	app := &gatewayApp{done: map[string]chan struct{}{}}
	srv := httptest.NewServer(app)
	defer srv.Close()
	tr := otelretry.NewTransport(nil, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)), otelretry.WithoutBudget())
	defer tr.CloseIdleConnections()
	client := outerLayer(tr)
	client.RetryWaitMin, client.RetryWaitMax = 100*time.Millisecond, 100*time.Millisecond
	ctx := otelretry.WithOperationID(context.Background(), "op-order-43")
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", []byte(`{"sku":"A1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	resp.Body.Close()
	app.mu.Lock()
	defer app.mu.Unlock()
	if app.applied != 1 || resp.StatusCode != http.StatusCreated {
		t.Fatalf("the app applied the order %d times (last status %d), want once, then its stored 201", app.applied, resp.StatusCode)
	}
}
