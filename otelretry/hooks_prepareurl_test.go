// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// PrepareAttemptFunc's godoc says what a hook may do to the URL's scheme
// and userinfo, which the policy does not judge: a scheme net/http has no
// protocol for ends the operation stop, invalid_request, with nothing
// sent; a userinfo is sent as no Authorization by net/http's Transport
// (http.Client adds one only from the caller's URL, above otelretry).
func TestAPrepareAttemptFuncsSchemeAndUserinfo(t *testing.T) {
	var served atomic.Int32
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		auth.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()

	ftp := otelretry.NewTransport(nil, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		r.URL.Scheme = "ftp"
		return nil
	}))
	defer ftp.CloseIdleConnections()
	_, err := ftp.RoundTrip(get(t, t.Context(), srv.URL))
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonInvalidRequest {
		t.Fatalf("scheme ftp: %v; want stop (invalid_request)", err)
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("scheme ftp: the server got %d requests; want none", n)
	}

	user := otelretry.NewTransport(nil, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		r.URL.User = url.UserPassword("bob", "pw")
		return nil
	}))
	defer user.CloseIdleConnections()
	resp, err := user.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	resp.Body.Close()
	if n, a := served.Load(), auth.Load(); n != 1 || a != "" {
		t.Fatalf("userinfo: served %d, Authorization %q; want 1 request with none", n, a)
	}
}
