// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A 2xx whose body breaks as the caller reads it, on a real loopback
// server through net/http's Transport (a Content-Length the server does
// not keep: unexpected EOF; the caller's own deadline cutting a slow
// download): otelhttp marks the attempt span an error, and its error.type
// is the read error's class (docs/telemetry.md), never the Go type name
// otelhttp writes ("*errors.errorString", "context.deadlineExceededError",
// before). The caller gets the read error itself.
func TestABrokenBodyOfA2xxKeepsErrorTypeInTheVocabulary(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, strings.Repeat("a", 50)) // and the handler ends: 50 bytes short
		case "/slow":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for i := 0; i < 20; i++ {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				io.WriteString(w, "0123456789")
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()

	for _, tc := range []struct {
		path  string
		class attrs.ErrorClass
		cause error
	}{
		{"/short", attrs.ErrorClassConnectionReset, io.ErrUnexpectedEOF},
		{"/slow", attrs.ErrorClassTimeout, context.DeadlineExceeded},
	} {
		path := tc.path
		t.Run(path, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			c := &http.Client{Transport: otelretry.NewTransport(&http.Transport{}, otelretry.WithTracerProvider(tp))}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, readErr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if readErr == nil {
				t.Fatal("the body read did not fail; the scenario did not happen")
			}

			att := spantest.Attempts(sr.Ended())
			if len(att) != 1 {
				t.Fatalf("%d attempt spans, want 1", len(att))
			}
			s := att[0]
			status, _ := spantest.Attr(s, attrs.HTTPResponseStatusCodeKey)
			decision, _ := spantest.Attr(s, attrs.DecisionKey)
			et, hasET := spantest.Attr(s, attrs.ErrorTypeKey)
			t.Logf("read error %q; attempt span: status %d, decision %s, error.type %q, span status %v",
				readErr, status.AsInt64(), decision.AsString(), et.AsString(), s.Status())
			if !hasET || et.AsString() != string(tc.class) {
				t.Errorf("attempt span with http.response.status_code=%d and retry.decision=%s carries error.type %q, want the read error's class %q",
					status.AsInt64(), decision.AsString(), et.AsString(), tc.class)
			}
			if !errors.Is(readErr, tc.cause) {
				t.Errorf("read error %v, want %v", readErr, tc.cause)
			}
		})
	}
}
