// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/internal/silentport"
	"github.com/otelretry/otelretry-go/otelretry"
)

// endlessA is a body reader of 'a's (no *bytes.Reader: net/http writes it
// through its own buffer, not the connection's ReadFrom).
type endlessA struct{}

func (endlessA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// A POST on a reused HTTP/1 connection whose write fails partway through
// its body (the server read the headers and 10 KiB, then reset the
// connection) reached the server: its outcome is unknown and it is not
// resent, sized or chunked, with a GetBody. The trace's proof that a
// request never left (a failed first write on a reused connection,
// wire.unsentByTrace) must not take it for unsent (a reviewer's lead,
// made a test: net/http reports such a write's failure as the body's).
func TestAPOSTCutPartwayOnAReusedConnectionIsNotResent(t *testing.T) {
	for _, length := range []int64{4 << 20, -1} {
		for run := range 5 {
			t.Run(fmt.Sprintf("length %d, run %d", length, run), func(t *testing.T) {
				posts := new(atomic.Int32)
				url := "http://" + silentport.Serve(t, func(c net.Conn) { serveUntilAPOST(c, posts) }) + "/"
				base := &http.Transport{}
				defer base.CloseIdleConnections()
				tr := otelretry.NewTransport(base, otelretry.WithoutBudget())
				resp, err := tr.RoundTrip(get(t, t.Context(), url)) // the connection, to be reused
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				body := func() io.ReadCloser { return io.NopCloser(io.LimitReader(endlessA{}, 4<<20)) }
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, body())
				req.ContentLength = length
				req.GetBody = func() (io.ReadCloser, error) { return body(), nil }
				if resp, err = tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err %v, want the outcome unknown", err)
				}
				if n := posts.Load(); n != 1 {
					t.Errorf("the server saw %d POSTs, want 1", n)
				}
			})
		}
	}
}

// serveUntilAPOST answers GETs 200 on c, kept alive, until a POST: it
// counts it, reads its headers and 10 KiB of its body, and resets c.
func serveUntilAPOST(c net.Conn, posts *atomic.Int32) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Method != http.MethodPost {
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			continue
		}
		posts.Add(1)
		io.CopyN(io.Discard, req.Body, 10<<10)
		c.(*net.TCPConn).SetLinger(0)
		return
	}
}
