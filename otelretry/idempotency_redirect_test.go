// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/decisions.md: a 307 or 308 hop of a keyed write to another URL is
// another write there, with a key of its own; a repeat of the first URL
// under the same operation id after the hop failed takes the first's
// key, as the 307 or 308 was no success (body.go's sendAgain: "307 and
// 308"; the 308 was untested until a mutant dropped it).
func TestARedirectedKeyedWriteHasAKeyPerURL(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			h := newHarness(t, []scripted.Step{
				{Status: status, Header: http.Header{"Location": {"http://api.test/b"}}},
				{Status: http.StatusBadRequest},
				{Status: status, Header: http.Header{"Location": {"http://api.test/b"}}},
				{Status: http.StatusOK},
			}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithoutBudget())
			ctx := otelretry.WithOperationID(t.Context(), "order-7")
			for range 2 { // the caller's own loop: the first try ends 400 at /b
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/a", bytes.NewReader([]byte(`{"n":1}`)))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := h.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			calls := h.base.Calls()
			if len(calls) != 4 {
				t.Fatalf("%d calls, want 4", len(calls))
			}
			key := func(i int) string { return calls[i].Header.Get("Idempotency-Key") }
			for i := range calls {
				if key(i) == "" {
					t.Fatalf("call %d (%s) carries no key", i, calls[i].URL)
				}
			}
			if key(0) == key(1) {
				t.Errorf("/a and /b share the key %s, want one per URL", key(0))
			}
			if key(2) != key(0) || key(3) != key(1) {
				t.Errorf("the caller's repeat took keys %s and %s, want the first try's %s and %s", key(2), key(3), key(0), key(1))
			}
		})
	}
}

// Without WithOperationID each hop of a redirect chain is a write with a
// key of its own, a 307 back to the same URL too (WithIdempotencyKeys'
// godoc says so; a reviewer found it silent): the chain's keys are lent
// only under an id of its own.
func TestWithoutAnOperationIDA307ToTheSameURLTakesAKeyOfItsOwn(t *testing.T) {
	for _, id := range []string{"", "order-8"} {
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"http://api.test/a"}}},
			{Status: http.StatusOK},
		}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithoutBudget())
		ctx := t.Context()
		if id != "" {
			ctx = otelretry.WithOperationID(ctx, id)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/a", bytes.NewReader([]byte(`{"n":1}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 {
			t.Fatalf("id %q: %d calls, want 2", id, len(calls))
		}
		first, second := calls[0].Header.Get("Idempotency-Key"), calls[1].Header.Get("Idempotency-Key")
		if same := first == second; first == "" || second == "" || same != (id != "") {
			t.Errorf("id %q: keys %q and %q; want one key under an id, two without", id, first, second)
		}
	}
}
