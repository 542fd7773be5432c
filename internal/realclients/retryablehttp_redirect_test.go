// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/otelretry/otelretry-go/otelretry"
)

// go-retryablehttp's RoundTripper between http.Client and otelretry: its
// second try of a redirect hop that failed at the chain's deadline (the
// first hop's, 400ms) is a try of its own, with a deadline of its own, as
// each of its tries is (docs/layers.md): /hop is called again and answers.
// The request it sends again is a fork of the first (net/http's), so no
// rule could tell it from a request built anew, whose chain ended long ago.
func TestRetryablehttpRoundTripperSendsAFailedHopAgainAsATryOfItsOwn(t *testing.T) {
	var hops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			time.Sleep(250 * time.Millisecond)
			http.Redirect(w, r, "/hop", http.StatusTemporaryRedirect)
		case "/hop":
			if hops.Add(1) == 1 {
				select { // past the chain's deadline
				case <-r.Context().Done():
				case <-time.After(2 * time.Second):
				}
				return
			}
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	rt := otelretry.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), otelretry.WithDeadline(400*time.Millisecond))
	defer rt.CloseIdleConnections()
	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.RetryMax = 1
	rc.RetryWaitMin, rc.RetryWaitMax = 10*time.Millisecond, 10*time.Millisecond
	// The outer http.Client follows the redirects; go-retryablehttp's own
	// client hands each 3xx up as it is.
	rc.HTTPClient = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	client := &http.Client{Transport: &retryablehttp.RoundTripper{Client: rc}}
	start := time.Now()
	resp, err := client.Get(srv.URL + "/start")
	took := time.Since(start)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil || hops.Load() != 2 {
		t.Errorf("a chain under WithDeadline(400ms): took %v, err %v, /hop called %d times; want its second try sent and answered",
			took, err, hops.Load())
	}
}
