// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A hint padded with a space ("Retry-After: 2 ", "retry-after-ms: 2000 ")
// is the same hint whatever protocol carried it (RFC 9110 §5.5):
// net/http's HTTP/1 reader trims the space, its HTTP/2 reader keeps it.
func TestAPaddedRetryHintIsReadOverEveryProtocol(t *testing.T) {
	for _, hint := range [][2]string{{"Retry-After", "2 "}, {"Retry-After", " 2"}, {"Retry-After-Ms", "2000 "}} {
		for _, h2 := range []bool{false, true} {
			name := hint[0] + "=" + hint[1] + " over HTTP/1.1"
			if h2 {
				name = hint[0] + "=" + hint[1] + " over HTTP/2"
			}
			t.Run(name, func(t *testing.T) {
				srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header()[hint[0]] = []string{hint[1]}
					w.WriteHeader(http.StatusServiceUnavailable)
				}))
				srv.EnableHTTP2 = h2
				srv.StartTLS()
				defer srv.Close()
				base := srv.Client().Transport.(*http.Transport)
				defer base.CloseIdleConnections()
				rec := tracetest.NewSpanRecorder()
				// One attempt: the decision on the first answer is all that
				// is read, and no pause is taken.
				client := &http.Client{Transport: otelretry.NewTransport(base,
					otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
					otelretry.WithMaxAttempts(1), otelretry.WithDeadline(10*time.Second),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if want := map[bool]int{false: 1, true: 2}[h2]; resp.ProtoMajor != want {
					t.Fatalf("the answer came over %s, want HTTP/%d", resp.Proto, want)
				}
				first := spantest.Attempts(rec.Ended())[0]
				for _, e := range first.Events() {
					if e.Name == attrs.EventRetryAfterInvalid {
						t.Errorf("%s %q (as received: %q) recorded as malformed: %v", hint[0], hint[1], resp.Header[hint[0]], e.Attributes)
					}
				}
				if got, ok := spantest.Attr(first, attrs.RetryAfterMsKey); !ok || got.AsInt64() != 2000 {
					t.Errorf("retry.retry_after_ms = %v (recorded: %v), want the server's 2000", got.AsInt64(), ok)
				}
			})
		}
	}
}
