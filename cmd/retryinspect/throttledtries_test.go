// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
)

// The scene of TestAThrottledTryRepeatedByALayerIsNoResend, but the layer
// tries again at once (no pause: one instant on virtual time). From the
// spans, each layer's operations should be listed as sent (repeat absent,
// 1, 2) and no POST, sent at most once, be an outer layer's resend: tries
// without attempts were listed after the one that was sent.
func TestThrottledTriesAtOneInstantAreListedAsSent(t *testing.T) {
	var spans []byte
	throttled := 0
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		rt := throttled503s(tp)
		getsRefused(t, rt, "http://orders.test/items", 40)
		throttled, _ = throttledLayers(t, tp, rt, 20, 0) // at once
		tp.Shutdown(context.Background())
		spans = out.Bytes()
	})
	if throttled == 0 {
		t.Fatal("nothing throttled")
	}
	r := analyzeWith(t, spans, read.Stdout)
	last := map[string]int64{}
	for _, op := range r.Operations {
		if op.Method != http.MethodPost {
			continue
		}
		rp := int64(0)
		if op.Repeat != nil {
			rp = *op.Repeat
		}
		if prev, ok := last[op.ID]; ok && rp < prev {
			t.Errorf("operation %s: repeat %d listed after repeat %d (attempts %d)", op.ID, rp, prev, len(op.Attempts))
		}
		last[op.ID] = rp
	}
	for _, f := range r.Findings {
		t.Errorf("finding %s: %s", f.Code, f.Seen)
	}
}
