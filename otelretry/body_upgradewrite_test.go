// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// failingConn is an upgraded connection whose Read ends at once and whose
// Write fails with writeErr.
type failingConn struct{ writeErr error }

func (failingConn) Read([]byte) (int, error)    { return 0, io.EOF }
func (c failingConn) Write([]byte) (int, error) { return 0, c.writeErr }
func (failingConn) Close() error                { return nil }

// A 101's upgraded connection is a body the caller writes to (body.go
// rawReadWriteCloser); its Write error, like a read error, may name the
// request, and reaches the caller sanitized like every error otelretry
// returns: no userinfo, query value or credential header value in it.
func TestAnUpgradedConnectionsWriteErrorLeaksNoCredential(t *testing.T) {
	h := newHarness(t, nil)
	rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusSwitchingProtocols, Request: r, ContentLength: -1,
			Header: http.Header{"Connection": {"Upgrade"}, "Upgrade": {"echo"}},
			Body:   failingConn{fmt.Errorf("write to %s %v: broken pipe", r.URL, r.Header)}}, nil
	}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1))
	req := get(t, t.Context(), "http://alice:PW-SECRET-3@api.test/v1?token=TOKEN-SECRET-4")
	req.Header.Set("Authorization", "Bearer AUTH-SECRET-1")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		t.Fatalf("the 101's body %T is no io.ReadWriteCloser", resp.Body)
	}
	_, werr := rw.Write([]byte("hello\n"))
	_ = rw.Close()
	if werr == nil || !strings.Contains(werr.Error(), "broken pipe") {
		t.Fatalf("write error %v; want the connection's, sanitized", werr)
	}
	for _, secret := range []string{"AUTH-SECRET-1", "PW-SECRET-3", "TOKEN-SECRET-4"} {
		if strings.Contains(werr.Error(), secret) {
			t.Errorf("write error %q leaks %q", werr, secret)
		}
	}
}
