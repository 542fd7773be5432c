// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"
	"testing/synctest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/layers.md: under another otelretry Transport, the chain a redirect
// continues is the outer's. The outer's hops share the caller's id and
// the second carries retry.redirects; the inner's operations are each of
// its own (below the outer's attempt, an operation boundary): two
// generated ids, neither marked as a later hop.
func TestUnderAnotherTransportTheChainIsTheOuters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
			if r.URL.Path == "/start" {
				resp.StatusCode = http.StatusTemporaryRedirect
				resp.Header.Set("Location", "/next")
			}
			return resp, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		inner := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
		client := &http.Client{Transport: otelretry.NewTransport(inner, otelretry.WithTracerProvider(tp))}
		resp, err := client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-s"), "http://a.test/start"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var outer, innerIDs []string
		for _, s := range rec.Ended() {
			if attrOf(s, attrs.OutcomeKey).AsString() == "" {
				continue // an attempt span
			}
			id, redirects := attrOf(s, attrs.OperationIDKey).AsString(), attrOf(s, attrs.RedirectsKey).AsInt64()
			if id == "op-s" {
				outer = append(outer, id)
				if want := int64(len(outer) - 1); redirects != want {
					t.Errorf("the outer's hop %d: retry.redirects %d; want %d", len(outer), redirects, want)
				}
				continue
			}
			innerIDs = append(innerIDs, id)
			if redirects != 0 {
				t.Errorf("the inner's operation %s: retry.redirects %d; want none (not a hop of its chain)", id, redirects)
			}
		}
		if len(outer) != 2 || len(innerIDs) != 2 || innerIDs[0] == innerIDs[1] {
			t.Errorf("operations: the outer's %v, the inner's %v; want 2 under op-s, 2 under ids of their own", outer, innerIDs)
		}
	})
}
