// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// keepOutcomeUnknown's slot nests under the caller's own: a write whose
// answer is lost (the POST hangs past the attempt timeout) under an SDK
// that flattens the error to text is reported to both, so the recipe puts
// ErrOutcomeUnknown back on the error, and the caller's outer slot holds
// the write and says OutcomeUnknown.
func TestKeepOutcomeUnknownLeavesTheCallersSlotItsResult(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	client := &http.Client{Transport: testTransport()}
	var outer otelretry.Results
	ctx := otelretry.WithResults(t.Context(), &outer)
	err := keepOutcomeUnknown(ctx, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/items", strings.NewReader(`{"sku":1}`))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("sdk: %v", err) // the error flattened to text, as http.Client's Timeout does
		}
		resp.Body.Close()
		return nil
	})
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("keepOutcomeUnknown returned %v, want an error matching ErrOutcomeUnknown", err)
	}
	last, ok := outer.Last()
	if n := f.executed("POST /items"); n != 1 || !ok || !last.OutcomeUnknown || !outer.OutcomeUnknown() || len(outer.Operations()) != 1 {
		t.Errorf("executed %d; the caller's slot holds %+v (OutcomeUnknown %v); want 1, and the unknown write", n, outer.Operations(), outer.OutcomeUnknown())
	}
}

// An operation may leave a write unknown and still return a response (Err
// nil): a keyed write whose first attempt timed out and whose resends
// were answered 503 returns the last 503. keepOutcomeUnknown still puts
// ErrOutcomeUnknown on the SDK's error for it, with the operation's id.
func TestKeepOutcomeUnknownOfAnOperationThatReturnedAResponse(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hang(r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	client := &http.Client{Transport: testTransport(otelretry.WithIdempotencyKeyContract())}
	var outer otelretry.Results
	err := keepOutcomeUnknown(otelretry.WithResults(t.Context(), &outer), func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/items", strings.NewReader(`{"sku":1}`))
		if err != nil {
			return err
		}
		req.Header.Set("Idempotency-Key", "item-1")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return fmt.Errorf("sdk: status %d", resp.StatusCode) // an SDK's error for the 503
	})
	last, _ := outer.Last()
	t.Logf("keyed POST hung, then 503, 503: executed %d, err %v, the result %+v", f.executed("POST /items"), err, last)
	if n := f.executed("POST /items"); n != 3 || !last.OutcomeUnknown || last.Err != nil || last.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("executed %d, the result %+v; want 3, and an unknown write that returned the 503", n, last)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !strings.Contains(err.Error(), last.OperationID) || strings.Contains(err.Error(), "%!") {
		t.Errorf("keepOutcomeUnknown returned %v; want an error matching ErrOutcomeUnknown that names %s", err, last.OperationID)
	}
}
