// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from README.md (section "Wrap an existing client", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
	"time"
)

func snippetWrapAnExistingClient1() {
	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithMaxAttempts(3),
		otelretry.WithDeadline(400*time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(40*time.Millisecond)))}

	ctx = otelretry.WithOperationID(ctx, "op-42") // at the operation boundary, before the first call
	resp, err := client.Do(req.WithContext(ctx))
	_ = client
	_ = resp
	_ = err
}
