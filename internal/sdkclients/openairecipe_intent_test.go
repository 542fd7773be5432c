// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestOpenAIStatelessKeepsTheCallersOwnIntent: an embedding (a stateless
// call) answered 503, then 200, whose caller's context carries an Intent of
// its own (NoRetry). openaiStateless (openairecipe.go) marks it "unless
// the call's context carries an Intent of its own": the caller's NoRetry
// holds, 1 execution and the 503.
func TestOpenAIStatelessKeepsTheCallersOwnIntent(t *testing.T) {
	f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			openaiAnswer(w, 503, `{"error":{"message":"busy","type":"server_error"}}`)
			return true
		}
		return false
	}))
	c, rt := openaiClient(f.URL, openaiSetup{setup: recipe})
	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{NoRetry: true})
	err := openaiCall(ctx, c, "embedding")
	got := f.executed("POST /v1/embeddings")
	t.Logf("recipe, caller's NoRetry, embedding 503 then 200: executed %d in %d client tries, err %v", got, rt.n.Load(), err)
	if got != 1 || err == nil {
		t.Errorf("executed %d, err %v; want 1 and the 503 (the caller's NoRetry)", got, err)
	}
}
