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
	addr, accepted := serveQUIC(t, cert, func(conn *quic.Conn, wg *sync.WaitGroup) {
		raw, err := srv.NewRawServerConn(conn)
		if err != nil {
			return
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
	})

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
