// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/layers.md (section "Credentials that expire between attempts (golang.org/x/oauth2)", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"golang.org/x/oauth2"
	"net/http"
)

// bearerEachAttempt sets each attempt's bearer token from ts (an
// oauth2.ReuseTokenSource): a retry after the token expired carries a
// fresh one.
func bearerEachAttempt(ts oauth2.TokenSource) otelretry.PrepareAttemptFunc {
	return func(r *http.Request, attempt int) error {
		tok, err := ts.Token()
		if err != nil {
			return err // the operation ends before this attempt is sent
		}
		tok.SetAuthHeader(r)
		return nil
	}
}
