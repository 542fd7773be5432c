// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// keyedRun sends a POST through the real transport, on virtual time, with
// opts, twice under one WithOperationID as a layer above would (the first
// try's answer lost: a timeout), and returns the spans.
func keyedRun(t *testing.T, opts ...otelretry.Option) []byte {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tp := spanWriter(t, &out)
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
		client := &http.Client{Transport: otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithTracerProvider(tp),
			otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithDeadline(time.Second)}, opts...)...)}
		ctx := otelretry.WithOperationID(t.Context(), "order-42")
		for range 2 { // a layer above: try again on any error
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{}`))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				break
			}
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return out.Bytes()
}

// A write resent under a key otelretry generated, by otelretry itself and
// by a layer above under the same operation id, is no unsafe resend; the
// same write sent again by a layer above without a key still is.
func TestResendsUnderAGeneratedKeyAreSafe(t *testing.T) {
	code, out, errOut := runOnFile(t, keyedRun(t, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(1)), "-strict")
	if code != exitClean || errOut != "" || !strings.Contains(out, "idempotency key generated") {
		t.Fatalf("a layer above's resend under the generated key: exit %d, stderr %q\n%s", code, errOut, out)
	}
	code, out, errOut = runOnFile(t, keyedRun(t, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())), "-strict")
	if code != exitClean || errOut != "" || !strings.Contains(out, "retryable_error") {
		t.Fatalf("otelretry's resend under the generated key: exit %d, stderr %q\n%s", code, errOut, out)
	}
	code, out, _ = runOnFile(t, keyedRun(t, otelretry.WithMaxAttempts(1)))
	if code != exitFindings || !strings.Contains(out, "["+string(inspect.CodeOuterLayerResend)+"]") {
		t.Fatalf("a layer above's resend without a key: exit %d, want the outer-layer-resend finding\n%s", code, out)
	}
}
