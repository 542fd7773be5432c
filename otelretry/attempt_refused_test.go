// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/decisions.md, row 24: a request net/http's Transport refuses itself
// before it asks for a connection (a header value holding a line break,
// an unsupported scheme, no host, a method that is no token) is the
// caller's, never seen by the host: refused again if sent again, so it
// ends stop (invalid_request) after one attempt, with net/http's error,
// and is not charged to the host's budget: a good GET's 503 after it is
// still retried. (It was sent three times and took the host's budget: a
// reviewer's find.)
func TestARequestTheTransportRefusesIsNeitherResentNorCharged(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	tr := otelretry.NewTransport(nil, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	defer tr.CloseIdleConnections()

	badHeader := get(t, t.Context(), srv.URL)
	badHeader.Header.Set("X-Bad", "a\nb")
	badPost := post(t, t.Context(), srv.URL, "x")
	badPost.Header.Set("X-Bad", "a\rb")
	badMethod := get(t, t.Context(), srv.URL)
	badMethod.Method = "GE T"
	noHost := get(t, t.Context(), srv.URL)
	noHost.URL.Host = ""
	scheme := get(t, t.Context(), strings.Replace(srv.URL, "http:", "ftp:", 1))
	for name, req := range map[string]*http.Request{"header": badHeader, "POST header": badPost, "method": badMethod, "no host": noHost, "scheme": scheme} {
		_, err := tr.RoundTrip(req)
		var oe *otelretry.Error
		if !errors.As(err, &oe) || oe.Attempts != 1 || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonInvalidRequest ||
			errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("%s: %v; want stop (invalid_request) after 1 attempt, outcome known", name, err)
		}
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("the server got %d of the refused requests", n)
	}
	resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatalf("good GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("good GET: %d after %d requests served; want 200 after its 503 was retried (the refused requests took the host's budget)", resp.StatusCode, served.Load())
	}
}
