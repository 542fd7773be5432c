// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"net/http"

	"github.com/hashicorp/vault/api"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The Vault recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// otelretryOwnsVaultRetries wraps the configured transport in otelretry's
// and turns the client's retries off; otelretry retries a 412 as the
// client did (retryVaultIndexNotReached). Call it last: DefaultConfig,
// ConfigureTLS, ReadEnvironment and the client's SetMaxIdleConnections and
// SetDisableKeepAlives need the *http.Transport itself.
func otelretryOwnsVaultRetries(config *api.Config, opts ...otelretry.Option) {
	opts = append([]otelretry.Option{otelretry.WithClassifier(retryVaultIndexNotReached)}, opts...)
	config.HttpClient.Transport = otelretry.NewTransport(config.HttpClient.Transport, opts...)
	config.MaxRetries = 0
	// go-retryablehttp's default policy answers with the context's error
	// once the caller's deadline has passed, in place of otelretry's: this
	// one keeps otelretry's (ErrOutcomeUnknown for a write in flight).
	config.CheckRetry = func(context.Context, *http.Response, error) (bool, error) { return false, nil }
}

// retryVaultIndexNotReached retries what the client's policy retried for
// ReadYourWrites: a performance standby answers 412 until it has the
// index (X-Vault-Index) the client sent, and the next try may find it.
func retryVaultIndexNotReached(a otelretry.Answer) otelretry.Classification {
	if a.StatusCode == http.StatusPreconditionFailed {
		return otelretry.Retryable(0)
	}
	return otelretry.Classification{}
}

// otelretryDecides is docs/layers.md's go-retryablehttp CheckRetry
// ("Stacking retry layers"): Vault's retries kept, they retry only what otelretry
// gave up on for lack of attempts.
func otelretryDecides(ctx context.Context, resp *http.Response, err error) (bool, error) {
	var oe *otelretry.Error
	if errors.As(err, &oe) {
		// otelretry's error says whether another try may help (its
		// attempts ran out, no write's outcome unknown, nothing the budget
		// or a throttle held back): keep it, also once the caller's
		// context is done.
		retry := oe.RetryableError() && ctx.Err() == nil
		return retry, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, nil
}
