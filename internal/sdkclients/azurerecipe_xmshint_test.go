// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestAzureRecipeReadsXMsRetryAfterMsAsAzcore: a GET answered 429 or 503
// with one hint header set (x-ms-retry-after-ms; as controls
// retry-after-ms alone and Retry-After alone), then 200, through the real
// azcore pipeline over the recipe. The recipe reads x-ms-retry-after-ms
// as azcore does (HintWholeMilliseconds): 300 is a hint of 300 ms, while
// 0.5 is no hint at all, and 0 falls through to Retry-After. otelretry's
// defaults would read 0.5 as 0.5 ms and 0 as a hint of 0 (openai-go's
// reading), so the Backoff is shown what the recipe's reading gives; a
// 429 with no hint is returned (the budget's pushback), not retried.
func TestAzureRecipeReadsXMsRetryAfterMsAsAzcore(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, hc := range []struct {
			name    string
			headers map[string]string
			shown   time.Duration // what otelretry's Backoff is shown
		}{
			{"x-ms-retry-after-ms 300", map[string]string{"x-ms-retry-after-ms": "300"}, 300 * time.Millisecond},
			{"x-ms-retry-after-ms 0.5", map[string]string{"x-ms-retry-after-ms": "0.5"}, 0},
			{"x-ms-retry-after-ms 0, Retry-After 1", map[string]string{"x-ms-retry-after-ms": "0", "Retry-After": "1"}, time.Second},
			{"control: retry-after-ms 300", map[string]string{"retry-after-ms": "300"}, 300 * time.Millisecond},
			{"control: retry-after-ms 0.5", map[string]string{"retry-after-ms": "0.5"}, 0},
			{"control: Retry-After 1", map[string]string{"Retry-After": "1"}, time.Second},
		} {
			t.Run(http.StatusText(status)+"/"+hc.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
					if n == 1 {
						for k, v := range hc.headers {
							w.Header().Set(k, v)
						}
						azureAnswer(w, status, azureError)
						return true
					}
					return false
				}))
				var hints hintsShown
				pl, rt := azurePipeline(recipe, hints.backoff())
				err := azureCall(t.Context(), pl, f.URL, azureRead)
				got, gap, shown := f.executed(azureRead), f.gap(azureRead), hints.shown()
				t.Logf("%d %s, then 200: executed %d in %d pipeline tries, gap %v, Backoff shown %v, err %v",
					status, hc.name, got, rt.n.Load(), gap.Round(10*time.Millisecond), shown, err)
				if status == http.StatusTooManyRequests && hc.shown == 0 {
					// A 429 with no hint holds the host's retries in the
					// budget (README.md, WithRetryableStatuses): returned.
					// Its Backoff may be asked, and is shown no hint.
					if err == nil || got != 1 || rt.n.Load() != 1 || len(shown) > 1 || (len(shown) == 1 && shown[0] != 0) {
						t.Errorf("executed %d in %d tries, Backoff shown %v, err %v; want the 429 returned after 1 in 1, no hint shown", got, rt.n.Load(), shown, err)
					}
					return
				}
				if err != nil || got != 2 || rt.n.Load() != 1 {
					t.Errorf("executed %d in %d tries, err %v; want 2 in 1 and the item", got, rt.n.Load(), err)
				}
				if len(shown) != 1 || shown[0] != hc.shown {
					t.Errorf("Backoff shown hints %v, want [%v]", shown, hc.shown)
				}
				if gap < hc.shown {
					t.Errorf("gap %v, want at least %v (the hint)", gap, hc.shown)
				}
			})
		}
	}
}

// TestAzureRecipeRetryAfterZero: docs/sdk-recipes.md's azcore section:
// "Retry-After: 0 ... is a hint of 0 to otelretry: the pause is the
// backoff ... the retry budget holds a 429 that carries it for 0, not for
// a 429's hold without a hint". With the recipe, a GET answered 429 with
// Retry-After: 0, then 200, is retried at once: 2 in 1 try, the Backoff
// shown 0.
func TestAzureRecipeRetryAfterZero(t *testing.T) {
	for _, v := range []string{"0", "Thu, 01 Jan 1970 00:00:00 GMT"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set("Retry-After", v)
					azureAnswer(w, http.StatusTooManyRequests, azureError)
					return true
				}
				return false
			}))
			var hints hintsShown
			pl, rt := azurePipeline(recipe, hints.backoff())
			err := azureCall(t.Context(), pl, f.URL, azureRead)
			got, shown := f.executed(azureRead), hints.shown()
			if err != nil || got != 2 || rt.n.Load() != 1 || len(shown) != 1 || shown[0] != 0 {
				t.Errorf("429 Retry-After %q: executed %d in %d tries, Backoff shown %v, err %v; want 2 in 1, shown [0s]", v, got, rt.n.Load(), shown, err)
			}
		})
	}
}

// TestAzureDefaultsResendARefusedRequest: docs/sdk-recipes.md's azcore
// section: at its defaults azcore runs 4 operations for one otelretry
// ended as "a request net/http refused (invalid_request)"; the recipe 1.
func TestAzureDefaultsResendARefusedRequest(t *testing.T) {
	for _, c := range []struct {
		s    setup
		want int32
	}{{sdkDefaults, 4}, {recipe, 1}} {
		t.Run(c.s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, azureServe(func(int, http.ResponseWriter) bool { return false }))
			pl, rt := azurePipeline(c.s)
			req, err := runtime.NewRequest(t.Context(), http.MethodGet, f.URL+"/items/a")
			if err != nil {
				t.Fatal(err)
			}
			req.Raw().Header["X-Bad"] = []string{"a\nb"}
			_, err = pl.Do(req)
			if err == nil || rt.n.Load() != c.want || f.executed(azureRead) != 0 {
				t.Errorf("executed %d in %d tries, err %v; want 0 in %d and an error", f.executed(azureRead), rt.n.Load(), err, c.want)
			}
		})
	}
}

// hintsShown records the hint each call of its Backoff is shown; the
// Backoff pauses 10 ms.
type hintsShown struct {
	mu    sync.Mutex
	hints []time.Duration
}

func (h *hintsShown) backoff() otelretry.Option {
	return otelretry.WithBackoff(otelretry.Backoff(func(_ int, a otelretry.Answer) time.Duration {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.hints = append(h.hints, a.RetryAfter)
		return 10 * time.Millisecond
	}))
}

func (h *hintsShown) shown() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.hints)
}
