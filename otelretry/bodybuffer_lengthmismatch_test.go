// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/time-and-bodies.md: a body with a GetBody is not read ahead, so a
// Content-Length that does not match it is found by net/http as it writes
// the request, after the headers: the write ends check_state, its outcome
// unknown, and is not sent again.
func TestAGetBodyWriteOfTheWrongLengthIsNotResent(t *testing.T) {
	srv, requests, base := readingServer(t)
	rt := otelretry.NewTransport(base, otelretry.WithoutBudget())
	body := []byte("sixteen bytes!!!")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body)) + 5
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("RoundTrip answered %d; want net/http's refusal of the length", resp.StatusCode)
	}
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Attempts != 1 || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v; want one attempt, its outcome unknown", err)
	}
	if n := requests.Load(); n > 1 {
		t.Errorf("the server handled %d requests, want at most 1", n)
	}
}

// The exception docs/time-and-bodies.md names: a write whose key
// otelretry generates under a shared WithOperationID is read ahead even
// with a GetBody (its bytes tell a repeat of it), so a length that does
// not match is found before any call: stop, nothing sent.
func TestAKeyedWriteOfTheWrongLengthIsFoundBeforeTheCall(t *testing.T) {
	srv, requests, base := readingServer(t)
	rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
	body := []byte("sixteen bytes!!!")
	req, err := http.NewRequestWithContext(otelretry.WithOperationID(t.Context(), "job-1"), http.MethodPost, srv.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body)) + 5
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("RoundTrip answered %d; want the length refused", resp.StatusCode)
	}
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v; want stop, its outcome known", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server handled %d requests, want 0", n)
	}
}
