// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/decisions.md row 24: net/http's Transport refuses a scheme other
// than http and https only when no RoundTripper was registered for it
// (Transport.RegisterProtocol); else it hands the request to it, and that
// protocol's transient failure (here a refused connection, then a 200) is
// a real failure, retried as any transport error (row 27), not stopped as
// invalid_request (it was: a reviewer's find).
func TestARegisteredProtocolsFailureIsNotARefusal(t *testing.T) {
	var calls atomic.Int32
	proto := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	base := &http.Transport{}
	base.RegisterProtocol("unixsock", proto)
	defer base.CloseIdleConnections()
	tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))

	resp, err := tr.RoundTrip(get(t, t.Context(), "unixsock://service/v1/items"))
	if err != nil {
		var oe *otelretry.Error
		errors.As(err, &oe)
		t.Fatalf("GET over a registered protocol: %v (outcome %v, reason %v, attempts %d, protocol called %d times); want retried to its 200",
			err, oe.Outcome, oe.Reason, oe.Attempts, calls.Load())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Errorf("status %d after %d calls; want 200 after 2", resp.StatusCode, calls.Load())
	}
}
