// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from README.md (section "Writes that succeed", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

func snippetWritesThatSucceed1() {
	client := &http.Client{Transport: otelretry.NewTransport(nil, // Idempotency-Key: 128 random bits per write
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))}
	ctx = otelretry.WithOperationID(ctx, "order-42") // a layer above's tries share its key
	_ = client
}
