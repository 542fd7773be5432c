// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"
	"time"
)

// docs/budget.md: a certificate stop is not retried, but the throttle
// counts it as a failure, as any transport error (its host answered the
// handshake with a certificate every request to it meets): after 20 of
// them, a request drawn at 0.5 is refused (rejection 0.9 at most).
func TestTheThrottleCountsACertificateStopAsAFailure(t *testing.T) {
	th := &Throttle{Window: time.Minute, rand: func() float64 { return 0.5 }}
	base := baseFunc(func(*http.Request) (*http.Response, error) {
		return nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
	})
	rt := NewTransport(base, WithThrottle(th), WithoutBudget())
	for range 20 {
		req, _ := http.NewRequest(http.MethodGet, "https://api.test/", nil)
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Fatal("the certificate was accepted")
		}
	}
	if th.admit("api.test", time.Now()) {
		t.Error("after 20 certificate stops, a request drawn at 0.5 was admitted; want refused: they count as failures")
	}
}
