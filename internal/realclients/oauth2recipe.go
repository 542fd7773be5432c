// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"net/http"

	"golang.org/x/oauth2"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The oauth2 recipe of docs/layers.md ("Credentials that expire between
// attempts"), as code the tests use: keep the two the same.

// bearerEachAttempt sets each attempt's bearer token from ts, which
// oauth2.ReuseTokenSource makes hand out its cached token until it
// expires, then a new one: a retry after the token expired carries a
// fresh one, where oauth2.Transport above otelretry sets one token for
// every attempt.
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
