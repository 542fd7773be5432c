// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/sdk-recipes.md (section "Vault api", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"github.com/hashicorp/vault/api"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

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

func newVault() (*api.Client, error) {
	config := api.DefaultConfig() // reads VAULT_ADDR, VAULT_CACERT, ...
	if config.Error != nil {
		return nil, config.Error
	}
	// Everything that sets the *http.Transport first.
	if err := config.ConfigureTLS(&api.TLSConfig{TLSServerName: "vault.internal"}); err != nil {
		return nil, err
	}
	otelretryOwnsVaultRetries(config)
	return api.NewClient(config)
}
