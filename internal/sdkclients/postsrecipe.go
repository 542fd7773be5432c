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
// repeat; every other request passes as it came. A redirect's hop is
// judged by the path the caller asked for: a 307 keeps the method and the
// body, so a read stays a read, and a write a write, wherever it is sent.
type repeatablePOSTs struct {
	next     http.RoundTripper
	suffixes []string
}

func (r repeatablePOSTs) RoundTrip(req *http.Request) (*http.Response, error) {
	asked := req
	for asked.Response != nil && asked.Response.Request != nil { // http.Client's redirect hops
		asked = asked.Response.Request
	}
	if req.Method == http.MethodPost {
		for _, suffix := range r.suffixes {
			if strings.HasSuffix(asked.URL.Path, suffix) {
				in := otelretry.CallIntent(req.Context()) // the caller's, kept
				in.Repeatable = true
				return r.next.RoundTrip(req.WithContext(otelretry.WithIntent(req.Context(), in)))
			}
		}
	}
	return r.next.RoundTrip(req)
}
