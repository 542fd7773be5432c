// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A PrepareAttemptFunc's token fetch, made with the request's context
// through the same client, is an operation of its own that takes none of
// the calling operation's Intent, and its hooks, reading IntentFromContext
// from Answer.Request.Context(), are told so: a Classifier that stops
// NoRetry requests (the documented pattern) lets the fetch's 503 be
// retried, while the calling operation's own Classifier is told NoRetry.
// Before, the fetch's hooks were told the calling operation's Intent, and
// its retry was stopped.
func TestAHooksCallIsToldItsOwnIntentNotTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		tokenCalls := 0
		seen := map[string][]string{} // path -> what IntentFromContext said
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			status := http.StatusOK
			if r.URL.Path == "/token" {
				mu.Lock()
				tokenCalls++
				if tokenCalls == 1 {
					status = http.StatusServiceUnavailable
				}
				mu.Unlock()
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		var client *http.Client
		classifier := func(a otelretry.Answer) otelretry.Classification {
			in, ok := otelretry.IntentFromContext(a.Request.Context())
			mu.Lock()
			if ok && in.NoRetry {
				seen[a.Request.URL.Path] = append(seen[a.Request.URL.Path], "NoRetry")
			} else if ok {
				seen[a.Request.URL.Path] = append(seen[a.Request.URL.Path], "other intent")
			} else {
				seen[a.Request.URL.Path] = append(seen[a.Request.URL.Path], "none")
			}
			mu.Unlock()
			if ok && in.NoRetry {
				return otelretry.NotRetryable()
			}
			return otelretry.Classification{}
		}
		prepare := func(r *http.Request, n int) error {
			if r.URL.Path == "/token" {
				return nil // the token fetch needs no token
			}
			tr, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://auth.test/token", nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(tr)
			if err != nil {
				return err
			}
			resp.Body.Close()
			r.Header.Set("Authorization", "Bearer t")
			return nil
		}
		tr := otelretry.NewTransport(base, otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)),
			otelretry.WithClassifier(classifier), otelretry.WithPrepareAttempt(prepare))
		client = &http.Client{Transport: tr}

		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{NoRetry: true})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/data", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		mu.Lock()
		defer mu.Unlock()
		t.Logf("IntentFromContext(Answer.Request.Context()) per path: %v; token calls: %d", seen, tokenCalls)
		if got := seen["/data"]; len(got) != 1 || got[0] != "NoRetry" {
			t.Errorf("the calling operation's Classifier was told %v, want its NoRetry", got)
		}
		for _, s := range seen["/token"] {
			if s != "none" {
				t.Errorf("the token fetch's Classifier read Intent %q from its Answer.Request.Context(); the fetch was given no Intent (the calling operation's NoRetry is not its own)", s)
				break
			}
		}
		if tokenCalls != 2 {
			t.Errorf("token fetch sent %d times, want 2: its own operation (no Intent) retries a 503 once, but its hooks were told it was NoRetry", tokenCalls)
		}
	})
}

// CallIntent is the Intent a call made with a context runs with: the
// caller's at the top; in a hook's context, none of the calling
// operation's (IntentFromContext tells the hook that one), until the hook
// adds one of its own.
func TestCallIntentIsTheIntentACallMadeWithTheContextRunsWith(t *testing.T) {
	caller := otelretry.Intent{NoRetry: true, MaxAttempts: 2}
	own := otelretry.Intent{Repeatable: true}
	type seen struct{ call, own, operation otelretry.Intent }
	var got seen
	prepare := func(r *http.Request, _ int) error {
		got.call = otelretry.CallIntent(r.Context())
		got.own = otelretry.CallIntent(otelretry.WithIntent(r.Context(), own))
		got.operation, _ = otelretry.IntentFromContext(r.Context())
		return nil
	}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	ctx := otelretry.WithIntent(t.Context(), caller)
	if in := otelretry.CallIntent(ctx); in != caller {
		t.Errorf("at the top: CallIntent %+v, want the caller's %+v", in, caller)
	}
	if in := otelretry.CallIntent(t.Context()); in != (otelretry.Intent{}) {
		t.Errorf("with none: CallIntent %+v, want the zero Intent", in)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
	resp, err := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(prepare)).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := (seen{otelretry.Intent{}, own, caller}); got != want {
		t.Errorf("in a hook's context: %+v, want %+v (the call's none, the hook's own once added, the operation's told by IntentFromContext)", got, want)
	}
}
