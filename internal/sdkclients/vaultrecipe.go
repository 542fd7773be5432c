// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"net/http"

	"github.com/hashicorp/vault/api"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The Vault recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// otelretryOwnsVaultRetries wraps the configured transport in otelretry's
// and turns the client's retries off. Call it last: DefaultConfig,
// ConfigureTLS, ReadEnvironment and the client's SetMaxIdleConnections and
// SetDisableKeepAlives need the *http.Transport itself.
func otelretryOwnsVaultRetries(config *api.Config, opts ...otelretry.Option) {
	config.HttpClient.Transport = otelretry.NewTransport(config.HttpClient.Transport, opts...)
	config.MaxRetries = 0
	// go-retryablehttp's default policy answers with the context's error
	// once the caller's deadline has passed, in place of otelretry's: this
	// one keeps otelretry's (ErrOutcomeUnknown for a write in flight).
	config.CheckRetry = func(context.Context, *http.Response, error) (bool, error) { return false, nil }
}

// otelretryDecides is docs/layers.md's go-retryablehttp CheckRetry
// ("Stacking retry layers"): Vault's retries kept, they retry only what otelretry
// gave up on for lack of attempts.
func otelretryDecides(ctx context.Context, resp *http.Response, err error) (bool, error) {
	var oe *otelretry.Error
	if errors.As(err, &oe) {
		// otelretry's error says what happened (an unknown outcome, the
		// deadline): keep it, also once the caller's context is done.
		retry := oe.Outcome == attrs.OutcomeMaxAttempts && !errors.Is(err, otelretry.ErrOutcomeUnknown) && ctx.Err() == nil
		return retry, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, nil
}
