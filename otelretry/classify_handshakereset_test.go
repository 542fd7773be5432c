// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A TLS server that ends the handshake: it reads the ClientHello and closes
// the connection, with a FIN (the client reads EOF) or a reset (the client
// reads "connection reset by peer"). Either way the handshake never
// completed, net/http never reported GotConn nor a write: the POST never
// left the client (docs/decisions.md row 26: "an error that proves the
// request never left: connection refused, DNS, TLS handshake, dial" ->
// retry, not_processed, for any request). The reset, a read of the
// server's hello, was taken for a call of a layer below that the trace
// contradicts, and ended check_state (unknown_write): the trace's failed
// handshake is that very error now.
func TestAWriteWhoseHandshakeTheServerResetIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reset bool
	}{{"FIN", false}, {"RST", true}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns atomic.Int32
			var wg sync.WaitGroup
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer c.Close()
						hdr := make([]byte, 5) // the ClientHello's record header
						if _, err := io.ReadFull(c, hdr); err != nil {
							return
						}
						io.CopyN(io.Discard, c, int64(hdr[3])<<8|int64(hdr[4]))
						if tc.reset {
							c.(*net.TCPConn).SetLinger(0)
						}
					}()
				}
			}()
			t.Cleanup(func() { l.Close(); wg.Wait() })

			base := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			t.Cleanup(base.CloseIdleConnections)
			rec := tracetest.NewSpanRecorder()
			client := &http.Client{Transport: otelretry.NewTransport(base,
				otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithMaxAttempts(3),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
				otelretry.WithDeadline(10*time.Second))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+l.Addr().String()+"/",
				strings.NewReader(`{"sku":1}`))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got %d; want the handshake's failure", resp.StatusCode)
			}
			a := spantest.Attempts(rec.Ended())
			if len(a) == 0 {
				t.Fatal("no attempt span")
			}
			d := attrOf(a[0], attrs.DecisionKey).AsString()
			r := attrOf(a[0], attrs.ReasonKey).AsString()
			t.Logf("err: %v", err)
			if d != "retry" || r != string(attrs.ReasonNotProcessed) {
				t.Errorf("attempt 1: %s/%s (class %s); want retry/not_processed: the handshake never completed",
					d, r, attrOf(a[0], attrs.ErrorClassKey).AsString())
			}
			if errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("error matches ErrOutcomeUnknown for a POST that never left the client")
			}
			if got := len(a); got != 3 {
				t.Errorf("%d attempts (%d connections); want 3, as for any request never sent", got, conns.Load())
			}
		})
	}
}
