// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/layers.md: go-retryablehttp's retry policy tells a certificate
// error by the type of url.Error.Err, which is otelretry's *Error above
// it, so at its defaults it tries one otelretry did not retry 5 times (5
// handshakes, each an operation ended stop, reason certificate);
// RetryMax 0 and otelretryDecides leave it at 1.
func TestACertificateErrorUnderRetryablehttp(t *testing.T) {
	var handshakes atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the handler ran: the handshake should have failed")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name       string
		apply      func(*retryablehttp.Client)
		handshakes int32
	}{
		{"defaults", func(*retryablehttp.Client) {}, 5},
		{"retries_off", outerSettings[0].apply, 1},
		{"otelretry_decides", outerSettings[1].apply, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := srv.Client().Transport.(*http.Transport).Clone()
			base.TLSClientConfig.RootCAs = x509.NewCertPool() // the server's certificate is unknown
			t.Cleanup(base.CloseIdleConnections)
			client := outerLayer(otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))))
			tc.apply(client)
			before := handshakes.Load()
			resp, err := client.Get(srv.URL)
			if resp != nil {
				resp.Body.Close()
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonCertificate || oe.Attempts != 1 {
				t.Errorf("err %v; want otelretry's stop (certificate) after 1 attempt", err)
			}
			if n := handshakes.Load() - before; n != tc.handshakes {
				t.Errorf("%d handshakes; want %d", n, tc.handshakes)
			}
		})
	}
}
