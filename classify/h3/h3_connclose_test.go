// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/otelretry"
)

// 32 POSTs are in flight together over one QUIC connection; the server has
// read (processed) every one of them, and then closes the whole connection
// with H3_REQUEST_REJECTED as its application error. A connection close is
// no stream-level proof that any of these requests was unprocessed: the
// server read all 32 bodies. No write the server may have processed may be
// sent again (README, docs/layers.md: "no write resent that the server may
// have processed").
func TestAConnectionClosedWithRequestRejectedUnder32WritesResendsNone(t *testing.T) {
	const n = 32
	cert, pool := newCert(t)
	var (
		mu        sync.Mutex
		processed = map[string]int{}
	)
	arrived := make(chan struct{}, 10*n)
	release := make(chan struct{})
	srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		processed[string(b)]++
		mu.Unlock()
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "created")
	})}
	addr, accepted := serveQUIC(t, cert, servingHTTP3(srv))

	rt, _ := retrying(t, newClient(t, pool), otelretry.WithoutBudget())
	url := "https://" + addr + "/orders"
	errs := make([]error, n)
	results := make([]otelretry.Results, n)
	var cwg sync.WaitGroup
	for i := range n {
		cwg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			ctx = otelretry.WithResults(ctx, &results[i])
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(fmt.Sprintf("order=%d", i)))
			resp, err := rt.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			errs[i] = err
		})
	}
	for range n {
		<-arrived
	}
	conns := accepted()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want the one all 32 share", len(conns))
	}
	first := conns[0]
	first.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
	close(release)
	cwg.Wait()

	mu.Lock()
	defer mu.Unlock()
	twice := 0
	for k, c := range processed {
		if c > 1 {
			twice++
			if twice <= 3 {
				t.Errorf("POST %q processed %d times", k, c)
			}
		}
	}
	for i, err := range errs {
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("write %d: err %v, want its outcome unknown", i, err)
			break
		}
	}
	if twice > 0 {
		t.Errorf("%d of %d processed POSTs were sent again after the connection closed with H3_REQUEST_REJECTED", twice, n)
	}
}

// servingHTTP3 serves each connection serveQUIC accepts with srv, so that
// a test can close a connection as a whole while srv handles its streams.
func servingHTTP3(srv *http3.Server) func(conn *quic.Conn, wg *sync.WaitGroup) {
	return func(conn *quic.Conn, wg *sync.WaitGroup) {
		raw, err := srv.NewRawServerConn(conn)
		if err != nil {
			return // the connection closed during setup
		}
		wg.Go(func() {
			for {
				str, err := conn.AcceptUniStream(context.Background())
				if err != nil {
					return
				}
				wg.Go(func() { raw.HandleUnidirectionalStream(str) })
			}
		})
		for {
			str, err := conn.AcceptStream(context.Background())
			if err != nil {
				return
			}
			wg.Go(func() { raw.HandleRequestStream(str) })
		}
	}
}

// A connection closed with H3_REQUEST_REJECTED after the server read a
// POST: quic-go's http3.Transport (v0.65) reads the code of a connection's
// close as it reads a stream's and resends any request it can make again,
// so the write is processed twice wherever quic-go can resend it: under
// WithTrustedBaseResends (docs/layers.md: quic-go is not such a base), and
// for a POST without a body, which it resends whatever otelretry does (a
// known limit, docs/layers.md). A POST with a body, without the option,
// goes to it without a GetBody and is processed once.
func TestAConnectionClosedWithRequestRejectedAfterTheWrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      bool
		opts      []otelretry.Option
		processed int32
	}{
		{"a body", true, nil, 1},
		{"a body, WithTrustedBaseResends", true, []otelretry.Option{otelretry.WithTrustedBaseResends()}, 2},
		{"no body", false, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, pool := newCert(t)
			var processed atomic.Int32
			arrived := make(chan struct{}, 4)
			srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				processed.Add(1)
				arrived <- struct{}{}
				<-r.Context().Done()
			})}
			addr, accepted := serveQUIC(t, cert, servingHTTP3(srv))
			rt, _ := retrying(t, newClient(t, pool), append(tc.opts, otelretry.WithoutBudget())...)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			var reqBody io.Reader
			if tc.body {
				reqBody = strings.NewReader(body)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/orders", reqBody)
			done := make(chan error, 1)
			go func() {
				resp, err := rt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			<-arrived
			accepted()[0].CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
			var err error
			select {
			case err = <-done:
			case <-arrived: // quic-go's resend, on a connection of its own: end it too
				for _, c := range accepted() {
					c.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeInternalError), "")
				}
				err = <-done
			}
			if p := processed.Load(); p != tc.processed {
				t.Errorf("POST processed %d times, want %d (err %v)", p, tc.processed, err)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want its outcome unknown", err)
			}
		})
	}
}
