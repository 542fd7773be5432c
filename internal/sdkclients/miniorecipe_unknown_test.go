// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestMinioUnknownWriteNeverForgotten: under one withOtelretryError
// context, a PutObject whose connection was dropped (its outcome unknown),
// then a read of the same context that fails too (max_attempts, no write
// in it). keepOtelretryErrors (miniorecipe.go): "an unknown write is never
// forgotten": the kept error still matches ErrOutcomeUnknown.
func TestMinioUnknownWriteNeverForgotten(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { drop(w) })
	c, _ := minioClient(t, f.URL, minioRecipe)
	ctx, otelretryErr := withOtelretryError(t.Context())
	_, err := c.PutObject(ctx, "items", "a", bytes.NewReader([]byte(smallObject)), int64(len(smallObject)), minio.PutObjectOptions{})
	if err == nil || !errors.Is(otelretryErr(), otelretry.ErrOutcomeUnknown) {
		t.Fatalf("PutObject: err %v, kept %v; want an error and ErrOutcomeUnknown kept", err, otelretryErr())
	}
	_, gerr := minioGet(ctx, c)
	kept := otelretryErr()
	t.Logf("dropped PutObject then dropped GetObject: put err %v; get err %v; kept %v; executed PUT %d, GET %d", err, gerr, kept, f.executed("PUT /items/a"), f.executed("GET /items/a"))
	if gerr == nil {
		t.Fatal("GetObject: no error")
	}
	if !errors.Is(kept, otelretry.ErrOutcomeUnknown) {
		t.Errorf("kept %v; want the PutObject's ErrOutcomeUnknown", kept)
	}
}
