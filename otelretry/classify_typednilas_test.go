// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// opDelegatingError answers errors.As for a *net.OpError through its own
// As, by errors.As on a field that holds a typed nil (as a wrapper that
// delegates As to the error it keeps does); it unwraps to that field.
type opDelegatingError struct{ op *net.OpError }

func (e *opDelegatingError) Error() string      { return "conn: broken" }
func (e *opDelegatingError) Unwrap() error      { return e.op }
func (e *opDelegatingError) As(target any) bool { return errors.As(e.op, target) }

// A base's error whose own As hands out the typed nil below it is read
// past: classify's errors.As(err, &opErr) reads opErr's fields
// (tlsAlert, neverSent, readFromConn) and must not panic RoundTrip (a
// reviewer's find: the stand-in took the own As's nil for a find).
func TestATypedNilHandedOutByAnOwnAsIsReadPast(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &opDelegatingError{op: (*net.OpError)(nil)}
	})
	tr := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1))
	anErrorIsReturned(t, nil, func() (*http.Response, error) { return tr.RoundTrip(get(t, t.Context(), "http://api.test/")) })
}
