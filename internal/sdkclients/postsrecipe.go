// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"net/http"
	"strings"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The layer of docs/sdk-recipes.md ("Reads sent as POST, by path"), as
// code the tests use: keep the two the same.

// repeatablePOSTs marks the POSTs whose path ends in one of suffixes
// ("/git-upload-pack", "/conversations.info") as reads otelretry may
// repeat; every other request passes as it came.
type repeatablePOSTs struct {
	next     http.RoundTripper
	suffixes []string
}

func (r repeatablePOSTs) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		for _, suffix := range r.suffixes {
			if strings.HasSuffix(req.URL.Path, suffix) {
				in := otelretry.CallIntent(req.Context()) // the caller's, kept
				in.Repeatable = true
				return r.next.RoundTrip(req.WithContext(otelretry.WithIntent(req.Context(), in)))
			}
		}
	}
	return r.next.RoundTrip(req)
}
