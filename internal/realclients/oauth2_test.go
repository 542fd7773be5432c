// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/otelretry/otelretry-go/otelretry"
)

// shortTokens hands out tok-1, tok-2, ..., each valid for 50 ms as oauth2
// reads validity (it takes a token as expired 10 s before its Expiry).
type shortTokens struct {
	mu sync.Mutex
	n  int
}

func (s *shortTokens) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return &oauth2.Token{AccessToken: fmt.Sprintf("tok-%d", s.n), TokenType: "Bearer",
		Expiry: time.Now().Add(10*time.Second + 50*time.Millisecond)}, nil
}

// authorizations is a base that records each request's Authorization and
// answers 503 to the first, 200 after.
type authorizations struct {
	mu   sync.Mutex
	seen []string
}

func (a *authorizations) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	status := http.StatusOK
	if len(a.seen) == 1 {
		status = http.StatusServiceUnavailable
	}
	a.mu.Unlock()
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// A token that expires between otelretry's attempts: under oauth2.Transport
// the retry carries the expired token, which oauth2 set once above
// otelretry; with the recipe's PrepareAttemptFunc (bearerEachAttempt) over
// oauth2.ReuseTokenSource it carries a fresh one, as docs/layers.md says.
func TestAnOAuth2TokenThatExpiresBetweenAttempts(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func(base http.RoundTripper) *http.Client
		want   []string
	}{
		{"oauth2.Transport above", func(base http.RoundTripper) *http.Client {
			return &http.Client{Transport: &oauth2.Transport{Source: oauth2.ReuseTokenSource(nil, &shortTokens{}),
				Base: otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))}}
		}, []string{"Bearer tok-1", "Bearer tok-1"}},
		{"the recipe", func(base http.RoundTripper) *http.Client {
			return &http.Client{Transport: otelretry.NewTransport(base,
				otelretry.WithPrepareAttempt(bearerEachAttempt(oauth2.ReuseTokenSource(nil, &shortTokens{}))),
				otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))}
		}, []string{"Bearer tok-1", "Bearer tok-2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &authorizations{}
				resp, err := c.client(base).Get("http://api.test/items")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || strings.Join(base.seen, ",") != strings.Join(c.want, ",") {
					t.Errorf("got %d after %q, want 200 after %q", resp.StatusCode, base.seen, c.want)
				}
			})
		})
	}
}

// The token endpoint's request is a POST, which otelretry does not repeat
// after a 503; a client-credentials grant is safe to repeat, and the
// recipe marks it so through the context given to the token source,
// which oauth2 sends the request with: one operation, two requests.
func TestAnOAuth2TokenRequestMarkedRepeatableIsRetried(t *testing.T) {
	for _, c := range []struct {
		name       string
		repeatable bool
		posts      int
		ok         bool
	}{
		{"not marked", false, 1, false},
		{"marked repeatable", true, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var posts int
				base := roundTrip(func(r *http.Request) (*http.Response, error) {
					posts++
					if posts == 1 {
						return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
						Body: io.NopCloser(strings.NewReader(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)), Request: r}, nil
				})
				client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
				ctx := context.WithValue(t.Context(), oauth2.HTTPClient, client)
				if c.repeatable {
					ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
				}
				conf := clientcredentials.Config{ClientID: "id", ClientSecret: "secret", TokenURL: "http://auth.test/token",
					AuthStyle: oauth2.AuthStyleInHeader} // one style: no second, untied POST
				_, err := conf.TokenSource(ctx).Token()
				if posts != c.posts || (err == nil) != c.ok {
					t.Errorf("%d token POSTs, err %v; want %d, success %v", posts, err, c.posts, c.ok)
				}
			})
		})
	}
}

// roundTrip is a base written as a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
