// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A POST the server answered 503 with X-Should-Retry: true (it saw it),
// resent under WithShouldRetryWrites; the resend met a refused connection
// and the operation ended max_attempts. The application sends the POST
// again. The span of the first attempt (the answered one) is lost: the
// operation span records retry.attempts 2, the input holds one attempt, a
// refused connection. The resend of a write the host saw is still
// reported: an operation sent nothing only where each attempt it recorded
// is in the input and never left. The first version of that rule read the
// attempts in the input alone (a reviewer's find).
func TestOuterLayerResendAfterALostAnsweredAttempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Should-Retry", "true")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusServiceUnavailable)
		ln.Close() // the next dial is refused
	})}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	defer func() { srv.Close(); <-done }()

	var buf bytes.Buffer
	tp := spanWriter(t, &buf)
	ctx, handler := tp.Tracer("app").Start(context.Background(), "handler", trace.WithSpanKind(trace.SpanKindServer))
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithShouldRetryWrites(), otelretry.WithMaxAttempts(2))}
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/orders", strings.NewReader(`{}`))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	handler.End()
	tp.Shutdown(context.Background())
	_, full, _ := runOnFile(t, buf.Bytes())
	t.Log(grepLines(full, "attempt-"))
	if !strings.Contains(full, "[outer-layer-resend]") {
		t.Fatalf("setup: with every span, no outer-layer-resend:\n%s", full)
	}
	var kept []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "/attempt-1\"") && strings.Contains(l, `"Value":503`) {
			continue // the answered attempt's span is lost
		}
		kept = append(kept, l)
	}
	code, out, _ := runOnFile(t, []byte(strings.Join(kept, "\n")))
	if !strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d: the first attempt's span (a 503 the host answered) lost, the resend of the write is no longer reported:\n%s", code, grepLines(out, "["))
	}
}
