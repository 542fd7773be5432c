// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/otelretry"
)

func answeringOK() http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
}

// A WithMetricAttributes labeler that returns its small, fixed set of
// labels (one slice it keeps) has that slice left as it was (a reviewer's
// find: the Transport reordered it).
func TestMetricAttributesLeaveTheLabelersSliceAlone(t *testing.T) {
	fixed := []attribute.KeyValue{attribute.String("tier", "gold"), attribute.String("dependency", "billing")}
	want := slices.Clone(fixed)
	rt := otelretry.NewTransport(answeringOK(), otelretry.WithMetricAttributes(func(*http.Request) []attribute.KeyValue { return fixed }))
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !slices.Equal(fixed, want) {
		t.Fatalf("the Transport rewrote the labeler's slice:\n got  %v\n want %v", fixed, want)
	}
}

// Operations in flight together (the Transport is safe for concurrent use)
// read the labeler's shared slice and never write it: no data race under
// -race (a reviewer's find: each sorted it in place).
func TestMetricAttributesOfOperationsInFlightTogetherDoNotRace(t *testing.T) {
	fixed := []attribute.KeyValue{attribute.String("dependency", "billing"), attribute.String("tier", "gold")} // sorted already
	rt := otelretry.NewTransport(answeringOK(), otelretry.WithMetricAttributes(func(*http.Request) []attribute.KeyValue { return fixed }))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
}
