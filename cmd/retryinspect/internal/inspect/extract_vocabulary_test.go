// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// TestAReasonOutsideItsSetOrANegativeFigureIsInvalid: invalid-attribute
// covers "a value outside its closed vocabulary" and "a negative count or
// duration" (doc.go). retry.reason, on an attempt and on a hedge_refused
// event, is a closed set (attrs.Reasons), and retry.backoff_ms,
// retry.retry_after_ms and http.request.resend_count are a duration, a
// duration and a count: each passed unchecked.
func TestAReasonOutsideItsSetOrANegativeFigureIsInvalid(t *testing.T) {
	for _, a := range []model.Attribute{
		kv(keyReason, model.String("bogus_reason")),
		kv(keyBackoffMs, model.Int(-40)),
		kv(keyRetryAfterMs, model.Int(-40)),
		kv(keyResendCount, model.Int(-1)),
	} {
		at := minimalAttempt("t", 1, 0, "op", 1, 0)
		at.Attributes = append(at.Attributes, a)
		if _, f := readAttempt(&at, false); !slices.ContainsFunc(f.invalid, func(s string) bool { return strings.HasPrefix(s, a.Key) }) {
			t.Errorf("an attempt's %s %v: invalid %q, want it named", a.Key, a.Value, f.invalid)
		}
	}
	for _, r := range []string{"bogus_reason", string(attrs.ReasonHedgeLimit)} {
		op := operationSpan("t", 1, 0, "op", 1, 1000)
		op.Events = append(op.Events, model.Event{Name: attrs.EventHedgeRefused, Time: op.Start, Attributes: []model.Attribute{
			kv(keyHedgeOf, model.Int(1)), kv(keyReason, model.String(r))}})
		_, f := readOperation(&op)
		want := []string(nil)
		if r == "bogus_reason" {
			want = []string{fmt.Sprintf("event %s: %s %q is not in the vocabulary", attrs.EventHedgeRefused, keyReason, r)}
		}
		if !slices.Equal(f.invalid, want) {
			t.Errorf("a hedge_refused event's reason %q: invalid %q, want %q", r, f.invalid, want)
		}
	}
	at := minimalAttempt("t", 1, 0, "op", 1, 0)
	at.Attributes = append(at.Attributes, kv(keyReason, model.String(string(attrs.ReasonResponse))), kv(keyBackoffMs, model.Int(0)),
		kv(keyRetryAfterMs, model.Int(0)), kv(keyResendCount, model.Int(0)))
	if _, f := readAttempt(&at, false); len(f.invalid) > 0 {
		t.Errorf("an attempt's reason and zero figures: invalid %q, want none", f.invalid)
	}
}
