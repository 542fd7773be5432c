// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/otelretry/otelretry-go/otelretry"
)

func vaultAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

const (
	vaultSecret      = `{"data":{"password":"a small secret"}}`
	vaultPlaintext   = `{"data":{"plaintext":"aGVsbG8="}}`
	vaultUnavailable = `{"errors":["Vault is sealed"]}`
)

type vaultSetup int

const (
	vaultDefaults           vaultSetup = iota // the client's retries at their defaults, only the waits shortened
	vaultRecipe                               // otelretryOwnsVaultRetries
	vaultDecides                              // the client's retries kept, CheckRetry: otelretryDecides
	vaultRetriesOffUnmarked                   // MaxRetries 0, reads sent as PUT not marked
)

func (s vaultSetup) String() string {
	return [...]string{"SDK defaults", "recipe", "CheckRetry otelretryDecides", "SDK retries off, reads not marked"}[s]
}

// vaultClient is a client of the fake over a fresh otelretry Transport;
// tries counts the client's calls to it.
func vaultClient(t *testing.T, url string, s vaultSetup) (*api.Client, *tries) {
	config := api.DefaultConfig()
	if config.Error != nil {
		t.Fatal(config.Error)
	}
	config.Address = url
	// The default waits (1s to 1.5s) shortened for the tests' time: the
	// number of retries stays the client's.
	config.MinRetryWait, config.MaxRetryWait = 10*time.Millisecond, 10*time.Millisecond
	switch s {
	case vaultRecipe:
		otelretryOwnsVaultRetries(config, testOptions()...)
	case vaultRetriesOffUnmarked:
		config.HttpClient.Transport = otelretry.NewTransport(config.HttpClient.Transport, testOptions()...)
		config.MaxRetries = 0
	default:
		config.HttpClient.Transport = otelretry.NewTransport(config.HttpClient.Transport, testOptions()...)
		if s == vaultDecides {
			config.CheckRetry = otelretryDecides
		}
	}
	rt := &tries{next: config.HttpClient.Transport}
	config.HttpClient.Transport = rt
	c, err := api.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken("a-token")
	return c, rt
}

// TestVaultReadRetried: a read answered 503, 503, 200: a secret (GET), and
// a transit decrypt (a read sent as PUT, marked on
// the call's context with the recipe).
func TestVaultReadRetried(t *testing.T) {
	reads := []struct {
		key, answer string
		call        func(ctx context.Context, c *api.Client, marked bool) (*api.Secret, error)
	}{
		{"GET /v1/secret/app", vaultSecret, func(ctx context.Context, c *api.Client, _ bool) (*api.Secret, error) {
			return c.Logical().ReadWithContext(ctx, "secret/app")
		}},
		{"PUT /v1/transit/decrypt/app", vaultPlaintext, func(ctx context.Context, c *api.Client, marked bool) (*api.Secret, error) {
			if marked {
				ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
			}
			return c.Logical().WriteWithContext(ctx, "transit/decrypt/app", map[string]any{"ciphertext": "vault:v1:abcd"})
		}},
	}
	for _, read := range reads {
		for _, s := range []vaultSetup{vaultDefaults, vaultRecipe, vaultRetriesOffUnmarked} {
			t.Run(read.key+"/"+s.String(), func(t *testing.T) {
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if n <= 2 {
						vaultAnswer(w, 503, vaultUnavailable)
						return
					}
					vaultAnswer(w, 200, read.answer)
				})
				c, rt := vaultClient(t, f.URL, s)
				secret, err := read.call(t.Context(), c, s == vaultRecipe)
				got := f.executed(read.key)
				t.Logf("%s 503, 503, 200, %s: executed %d in %d client tries, err %v", read.key, s, got, rt.n.Load(), err)
				if s == vaultRetriesOffUnmarked && !strings.HasPrefix(read.key, "GET") {
					var re *api.ResponseError
					if !errors.As(err, &re) || re.StatusCode != 503 || got != 1 {
						t.Errorf("executed %d, err %v; want 1 and the 503", got, err)
					}
					return
				}
				if err != nil || secret == nil || got != 3 {
					t.Fatalf("executed %d, err %v; want 3 and the data", got, err)
				}
				wantTries := int32(1)
				if s == vaultDefaults && !strings.HasPrefix(read.key, "GET") {
					wantTries = 3 // otelretry stops at each 503; the client retries
				}
				if rt.n.Load() != wantTries {
					t.Errorf("%d client tries, want %d", rt.n.Load(), wantTries)
				}
				bodies := f.bodiesOf(read.key)
				for _, b := range bodies[1:] {
					if b != bodies[0] {
						t.Errorf("retried body %q, first %q", b, bodies[0])
					}
				}
			})
		}
	}
}

// TestVaultWriteNotRepeated: a secret written (PUT), executed and never
// answered (hung), or answered by dropping the connection.
func TestVaultWriteNotRepeated(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hung", "dropped"} {
		for _, s := range []vaultSetup{vaultDefaults, vaultRecipe, vaultDecides} {
			t.Run(mode+"/"+s.String(), func(t *testing.T) {
				// A hung server is waited out under the client's own
				// timeouts; each case has a server and a client of its
				// own, so the cases wait together.
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if mode == "hung" {
						hang(r)
						return
					}
					drop(w)
				})
				c, rt := vaultClient(t, f.URL, s)
				_, err := c.Logical().WriteWithContext(t.Context(), "secret/data/app", map[string]any{"data": map[string]any{"password": "p"}})
				got := f.executed("PUT /v1/secret/data/app")
				t.Logf("%s write, %s: executed %d in %d client tries, unknown outcome %v, err %v", mode, s, got, rt.n.Load(), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
				if err == nil {
					t.Fatal("no error")
				}
				if s == vaultDefaults {
					if got != 3 {
						t.Errorf("executed %d; the client at its defaults was measured resending it to 3", got)
					}
					return
				}
				var oe *otelretry.Error
				if got != 1 || !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.OperationID == "" {
					t.Errorf("executed %d, err %v; want 1, ErrOutcomeUnknown and the operation id", got, err)
				}
			})
		}
	}
}

// TestVaultRetryAfter: a secret read answered 429 with Retry-After, then
// the secret.
func TestVaultRetryAfter(t *testing.T) {
	for _, s := range []vaultSetup{vaultDefaults, vaultRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					vaultAnswer(w, 429, `{"errors":["rate limited"]}`)
					return
				}
				vaultAnswer(w, 200, vaultSecret)
			})
			c, rt := vaultClient(t, f.URL, s)
			_, err := c.Logical().ReadWithContext(t.Context(), "secret/app")
			const key = "GET /v1/secret/app"
			got, gap := f.executed(key), f.gap(key)
			t.Logf("429 Retry-After: 1, then 200, %s: executed %d in %d client tries, gap %v, err %v", s, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
			if err != nil || got != 2 || gap < 900*time.Millisecond {
				t.Errorf("executed %d, gap %v, err %v; want 2, after the server's 1s", got, gap, err)
			}
		})
	}
}

// TestVaultIndexNotReached: a performance standby answers a read 412 until
// it has the index the client sent (ReadYourWrites), which the client's
// policy retries for that reason; the recipe turned that retry off with
// the others, and the read failed.
func TestVaultIndexNotReached(t *testing.T) {
	for _, s := range []vaultSetup{vaultDefaults, vaultRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					vaultAnswer(w, 412, `{"errors":["required index state not present"]}`)
					return
				}
				vaultAnswer(w, 200, vaultSecret)
			})
			c, rt := vaultClient(t, f.URL, s)
			secret, err := c.Logical().ReadWithContext(t.Context(), "secret/app")
			got := f.executed("GET /v1/secret/app")
			t.Logf("GET 412, then 200, %s: executed %d in %d client tries, err %v", s, got, rt.n.Load(), err)
			if err != nil || secret == nil || got != 2 {
				t.Errorf("executed %d, err %v; want 2 and the secret", got, err)
			}
		})
	}
}

// TestVaultCallerDeadline: the caller's deadline (300ms) is shorter than
// otelretry's (2s); the server hangs on a read.
func TestVaultCallerDeadline(t *testing.T) {
	for _, s := range []vaultSetup{vaultDefaults, vaultRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			c, rt := vaultClient(t, f.URL, s)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := c.Logical().ReadWithContext(ctx, "secret/app")
			took, got := time.Since(start), f.executed("GET /v1/secret/app")
			t.Logf("caller deadline 300ms, %s: executed %d in %d client tries, took %v, err %v", s, got, rt.n.Load(), took.Round(10*time.Millisecond), err)
			if !errors.Is(err, context.DeadlineExceeded) || took > time.Second || got != 1 {
				t.Errorf("executed %d, took %v, err %v; want 1, about 300ms, a deadline", got, took, err)
			}
		})
	}
}

// TestVaultWriteCallerDeadline: a write in flight when the caller's
// deadline (300ms) passes. go-retryablehttp's default policy returns the
// context's error in place of otelretry's; the recipe's CheckRetry and
// otelretryDecides keep otelretry's.
func TestVaultWriteCallerDeadline(t *testing.T) {
	for _, s := range []vaultSetup{vaultDefaults, vaultRetriesOffUnmarked, vaultDecides, vaultRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			c, rt := vaultClient(t, f.URL, s)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err := c.Logical().WriteWithContext(ctx, "secret/data/app", map[string]any{"data": map[string]any{"password": "p"}})
			got, unknown := f.executed("PUT /v1/secret/data/app"), errors.Is(err, otelretry.ErrOutcomeUnknown)
			t.Logf("write, caller deadline 300ms, %s: executed %d in %d client tries, unknown outcome %v, err %v", s, got, rt.n.Load(), unknown, err)
			if got != 1 || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("executed %d, err %v; want 1 and a deadline", got, err)
			}
			if keeps := s == vaultRecipe || s == vaultDecides; unknown != keeps {
				t.Errorf("error %v: matches ErrOutcomeUnknown %v, want %v (docs/sdk-recipes.md: lost at the client's defaults and with its retries off alone)", err, unknown, keeps)
			}
		})
	}
}

// TestVaultLargeDownload: a secret of 4 MiB that takes longer than the
// attempt timeout to read is read whole.
func TestVaultLargeDownload(t *testing.T) {
	blob := strings.Repeat("x", 4<<20)
	page := `{"data":{"blob":"` + blob + `"}}`
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for i := 0; i < 8; i++ { // 8 chunks, 60ms apart, past the 400ms attempt timeout
			io.WriteString(w, page[i*len(page)/8:(i+1)*len(page)/8])
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	})
	c, _ := vaultClient(t, f.URL, vaultRecipe)
	secret, err := c.Logical().ReadWithContext(t.Context(), "secret/app")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := secret.Data["blob"].(string); got != blob || f.executed("GET /v1/secret/app") != 1 {
		t.Errorf("read %d of %d bytes in %d executions", len(got), len(blob), f.executed("GET /v1/secret/app"))
	}
}

// After the recipe, the setters that need the *http.Transport fail: the
// transport is wrapped last.
func TestVaultWrapLast(t *testing.T) {
	config := api.DefaultConfig()
	otelretryOwnsVaultRetries(config)
	err := config.ConfigureTLS(&api.TLSConfig{Insecure: true})
	t.Logf("ConfigureTLS after the recipe: %v", err)
	if err == nil {
		t.Error("ConfigureTLS accepted otelretry's Transport")
	}
	c, err := api.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		t.Logf("SetMaxIdleConnections after the recipe: panic %v", r)
		if r == nil {
			t.Error("SetMaxIdleConnections did not panic")
		}
	}()
	c.SetMaxIdleConnections(4)
}
