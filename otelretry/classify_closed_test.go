// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A server that accepts a connection and closes it: net/http reports
// either "http: server closed idle connection" (an unexported errors.New,
// when the close came before the request was handed to the connection)
// or a reset or EOF of the write, as the close and the write race. Both
// are the same failure: class connection_reset, and a write's outcome
// unknown (check_state). The first was class other, and the write ended
// stop/not_idempotent.
func TestAConnectionTheServerClosedIsAResetWhicheverErrorNetHTTPGives(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			time.Sleep(30 * time.Millisecond) // the server's close arrives before the request is written
		}
		return c, err
	}}
	defer base.CloseIdleConnections()
	classes := map[string]int{}
	decisions := map[string]int{}
	for range 10 {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		c := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutBudget(),
			otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
		req, _ := http.NewRequest(http.MethodPost, "http://"+l.Addr().String()+"/orders", strings.NewReader(`{"n":1}`))
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("want an error")
		}
		atts := spantest.Attempts(rec.Ended())
		a := atts[0]
		cl, _ := spantest.Attr(a, "retry.error_class")
		d, _ := spantest.Attr(a, "retry.decision")
		r, _ := spantest.Attr(a, "retry.reason")
		classes[cl.AsString()]++
		decisions[d.AsString()+"/"+r.AsString()]++
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("err %v, want ErrOutcomeUnknown", err)
		}
	}
	if classes["connection_reset"] != 10 || decisions["check_state/unknown_write"] != 10 {
		t.Errorf("classes %v, decisions %v; want connection_reset and check_state/unknown_write for all 10", classes, decisions)
	}
}
