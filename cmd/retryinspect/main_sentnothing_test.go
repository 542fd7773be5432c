// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/retryinspect.md: outer-layer-resend is "never after an operation
// that sent nothing". docs/decisions.md rows 24 and 25: a request net/http
// refused (invalid_request, "the host saw nothing") and a certificate the
// client rejected ("nothing was sent") end stop. An application loop that
// sends such a POST again repeats nothing the host saw. Each was reported
// an outer layer's resend: only an operation with no attempt counted as
// one that sent nothing (a reviewer's find).
func TestNoOuterLayerResendAfterAStopThatSentNothing(t *testing.T) {
	for _, kind := range []string{"invalid_request", "certificate"} {
		t.Run(kind, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) }))
			defer srv.Close()
			var buf bytes.Buffer
			tp := spanWriter(t, &buf)
			ctx, handler := tp.Tracer("app").Start(context.Background(), "handler", trace.WithSpanKind(trace.SpanKindServer))
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
			for range 2 { // the loop: again after the failure
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(`{}`))
				if kind == "invalid_request" {
					req.Header["X-Bad"] = []string{"a\nb"}
				}
				if _, err := client.Do(req); err == nil || !strings.Contains(err.Error(), "stop ("+kind+")") {
					t.Fatalf("err %v, want stop (%s)", err, kind)
				}
			}
			handler.End()
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			code, out, _ := runOnFile(t, buf.Bytes())
			if code != exitClean || strings.Contains(out, "[outer-layer-resend]") {
				t.Errorf("exit %d: a write that ended stop (%s), nothing sent, then sent again, reported as an outer layer's resend:\n%s", code, kind, grepLines(out, "seen:"))
			}
		})
	}
}
