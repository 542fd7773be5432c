// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/decisions.md (section "Writes under an idempotency key", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"context"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

func snippetDecisionsWritesUnderAnIdempotencyKey1() {
	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), // Idempotency-Key: "<32 hex digits>"
		otelretry.WithOperationIDHeader("X-Operation-Id"))}             // the id to look a write up by
	// At the operation boundary: a layer above's tries of one write share its key.
	ctx := otelretry.WithOperationID(context.Background(), "order-42")
	_ = client
	_ = ctx
}
