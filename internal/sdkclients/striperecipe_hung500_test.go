// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestStripeRecipeHungThen500: the first try is applied and its
// answer lost; the later tries get a 500 (stripeStored: "a 5xx (perhaps a
// proxy's, which never reached Stripe)"): the customer may exist.
func TestStripeRecipeHungThen500(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hang(r)
			return
		}
		stripeAnswer(w, http.StatusInternalServerError, stripeProxyError)
	})
	c, rt := stripeClient(f.URL, recipe, otelretry.WithDeadline(300*time.Millisecond))
	_, err := createCustomer(t.Context(), c, "a@example.com", "create-a")
	if err == nil || !strings.Contains(err.Error(), "may exist") {
		t.Errorf("executed %d in %d tries: %v; want an error that says the customer may exist", f.executed(stripeCreate), rt.n.Load(), err)
	}
}
