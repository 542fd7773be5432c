// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// x/net's GoAwayError (a stream the server counted in its GOAWAY, then
// closed the connection under) is a connection that broke under a stream
// that may have been processed: class connection_reset, as net/http's own
// unexported copy of it is.
func TestXNetsGoAwayErrorIsAConnectionReset(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, http2.GoAwayError{LastStreamID: 1, ErrCode: http2.ErrCodeNo}
	})
	rt := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1), otelretry.WithoutClientSpans(),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RoundTrip(req); err == nil {
		t.Fatal("RoundTrip succeeded; want the GOAWAY")
	}
	var classes []string
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == attrs.ErrorClassKey {
				classes = append(classes, kv.Value.AsString())
			}
		}
	}
	if len(classes) != 1 || classes[0] != string(attrs.ErrorClassConnectionReset) {
		t.Errorf("recorded classes %q, want [connection_reset]", classes)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
