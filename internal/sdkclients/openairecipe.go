// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The openai-go recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// openaiStatelessCalls are the POSTs that create nothing on the service
// but are billed per call: completions, embeddings, moderations.
var openaiStatelessCalls = []string{"/chat/completions", "/completions", "/embeddings", "/moderations"}

// otelretryOwnsOpenAIRetries puts otelretry in hc, over its Transport, and
// returns the client's options: openai-go's retries off (it resends a
// create with no idempotency key), otelretry's attempt number in
// X-Stainless-Retry-Count, a service's "x-should-retry: true" honoured for
// writes too, and the stateless calls marked with billed, an Intent that
// makes them repeatable.
func otelretryOwnsOpenAIRetries(hc *http.Client, billed otelretry.Intent, opts ...otelretry.Option) []option.RequestOption {
	hc.Transport = otelretry.NewTransport(hc.Transport, append([]otelretry.Option{
		otelretry.WithAttemptHeader("X-Stainless-Retry-Count"), otelretry.WithShouldRetryWrites()}, opts...)...)
	return []option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0),
		option.WithHeaderDel("X-Stainless-Retry-Count"), option.WithMiddleware(openaiStateless(billed))}
}

// openaiStateless gives the stateless calls intent, unless the call's
// context carries an Intent of its own.
func openaiStateless(intent otelretry.Intent) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if otelretry.CallIntent(req.Context()) == (otelretry.Intent{}) && req.Method == http.MethodPost &&
			slices.ContainsFunc(openaiStatelessCalls, func(p string) bool { return strings.HasSuffix(req.URL.Path, p) }) {
			req = req.WithContext(otelretry.WithIntent(req.Context(), intent))
		}
		return next(req)
	}
}

// newVectorStore creates a vector store. An error that matches
// otelretry.ErrOutcomeUnknown may hide a created store, even when the
// caller's context ended first: look for it before creating it again.
func newVectorStore(ctx context.Context, c openai.Client, name string) (*openai.VectorStore, error) {
	var vs *openai.VectorStore
	err := keepOutcomeUnknown(ctx, func(ctx context.Context) (err error) {
		vs, err = c.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String(name)})
		return err
	})
	return vs, err
}
