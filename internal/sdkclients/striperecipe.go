// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The stripe-go recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// otelretryUnderStripe puts otelretry under stripe-go, which keeps its own
// retries: it resends a write under one Idempotency-Key, which Stripe
// applies once. otelretry records that contract, so that those resends
// read as safe, and retries reads itself. cfg.HTTPClient, if set, is the
// client otelretry goes in, over its Transport.
func otelretryUnderStripe(cfg *stripe.BackendConfig, opts ...otelretry.Option) {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 80 * time.Second} // stripe-go's default
	}
	cfg.HTTPClient.Transport = otelretry.NewTransport(cfg.HTTPClient.Transport,
		append([]otelretry.Option{otelretry.WithRecordedIdempotencyKey()}, opts...)...)
}

// withStripeCall returns a context for one stripe-go call, whose tries
// share an operation id (unless ctx has one), and a function that reports
// whether the call's write may have been applied with its answer lost: a
// try's answer was lost, and no later try got the result Stripe stored
// under the key (stripe-go sends every try under the same
// Idempotency-Key, and Stripe answers a resend with that result).
func withStripeCall(ctx context.Context) (context.Context, func() bool) {
	ctx = otelretry.EnsureOperationID(ctx)
	results := &otelretry.Results{}
	return otelretry.WithResults(ctx, results), func() bool {
		unknown := false
		for _, try := range results.Operations() {
			if try.OutcomeUnknown {
				unknown = true
			} else if stripeStored(try.StatusCode) {
				unknown = false
			}
		}
		return unknown
	}
}

// stripeStored reports whether an answer of status to a keyed try is the
// result Stripe stored under the key: any answer but a 409 (the key's
// first request still in progress), a 429 (refused before it ran) and a
// 5xx (perhaps a proxy's, which never reached Stripe); 0 is no answer.
func stripeStored(status int) bool {
	return status != 0 && status != http.StatusConflict && status != http.StatusTooManyRequests && status < 500
}

// createCustomer creates a customer under key, an Idempotency-Key of the
// caller's. An error that says the customer may exist asks for the create
// to be sent again under the same key, which Stripe answers with the first
// create's result.
func createCustomer(ctx context.Context, sc *stripe.Client, email, key string) (*stripe.Customer, error) {
	ctx, unknown := withStripeCall(ctx)
	params := &stripe.CustomerCreateParams{Email: stripe.String(email)}
	params.SetIdempotencyKey(key)
	c, err := sc.V1Customers.Create(ctx, params)
	if err != nil && unknown() {
		return nil, fmt.Errorf("customer %s may exist: send it again under key %q: %w", email, key, err)
	}
	return c, err
}
