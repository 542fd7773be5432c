// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// upstreamBody is a request body streamed from elsewhere (a proxy copying
// an upstream HTTP/2 response into its POST): it gives part of the body,
// then the upstream's REFUSED_STREAM, as x/net's response body reports it
// (a typed http2.StreamError). The refusal is the upstream's, of another
// stream on another connection: it proves nothing of this POST, whose
// headers and part of whose body this server already received.
type upstreamBody struct{ n int }

func (b *upstreamBody) Read(p []byte) (int, error) {
	b.n++
	if b.n == 1 {
		return copy(p, "order="), nil
	}
	return 0, http2.StreamError{StreamID: 5, Code: http2.ErrCodeRefusedStream}
}

func (b *upstreamBody) Close() error { return nil }

// A request body whose Read fails with a StreamError carrying
// REFUSED_STREAM (an upstream's, copied by a proxy) reaches the caller of
// the ClientConn unchanged: the classifier read it as this server's
// refusal, and otelretry resent a POST the server already received (a
// reviewer's find). A request whose own body broke proves nothing now: its
// outcome is unknown, and it is not resent.
func TestARefusalFromTheRequestsBodyIsNoProof(t *testing.T) {
	for name, cc := range map[string]func(*testing.T, *h2Server) http.RoundTripper{
		"x/net":    func(t *testing.T, s *h2Server) http.RoundTripper { return xnetClientConn(t, s) },
		"net/http": func(t *testing.T, s *h2Server) http.RoundTripper { return stdClientConn(t, s) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := startH2(t, always(process))
			rt := otelretry.NewTransport(cc(t, srv),
				otelretry.WithClassifier(h2.Classify),
				otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
				otelretry.WithDeadline(testTimeout),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url(), &upstreamBody{})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = -1 // streamed: not buffered by otelretry
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(body))), nil }
			resp, err := rt.RoundTrip(req)
			if err == nil {
				readAll(t, resp)
			}
			// The server reads the stream's HEADERS on its own goroutine,
			// maybe after RoundTrip returned: wait for it, bounded.
			for deadline := time.Now().Add(testTimeout); srv.streams.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if s := srv.streams.Load(); s != 1 {
				t.Errorf("server got the POST's headers on %d streams (processed whole %d); want 1: the POST was resent on a refusal that was not this server's", s, srv.processed.Load())
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v; want ErrOutcomeUnknown", err)
			}
			// The poll above stops at the first stream: a resend's second
			// may come after it. otelretry's own count of attempts says
			// whether it resent, whenever the server sees it.
			var e *otelretry.Error
			if !errors.As(err, &e) {
				t.Errorf("err = %v (%T); want an *otelretry.Error", err, err)
			} else if e.Attempts != 1 {
				t.Errorf("%d attempts; want 1: a POST whose own body broke was resent", e.Attempts)
			}
		})
	}
}
