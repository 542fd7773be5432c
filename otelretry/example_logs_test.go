// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/otelretry/otelretry-go/otelretry"
)

// printer is a log Processor that prints each event's name, severity and
// a few of its attributes. A real program uses a batch processor over an
// OTLP exporter instead.
type printer struct{}

func (printer) OnEmit(_ context.Context, r *sdklog.Record) error {
	line := r.EventName() + " " + r.SeverityText()
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		switch kv.Key {
		case "retry.attempt", "http.response.status_code", "retry.decision", "retry.outcome", "retry.attempts":
			line += " " + string(kv.Key) + "=" + kv.Value.Emit()
		}
		return true
	})
	fmt.Println(line)
	return nil
}

func (printer) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (printer) Shutdown(context.Context) error                         { return nil }
func (printer) ForceFlush(context.Context) error                       { return nil }

// Log events: one record per attempt and one per operation, through an
// SDK LoggerProvider. A program sets its provider as the global one at
// start-up (global.SetLoggerProvider, next to the tracer and meter
// providers) and gives the Transport global.GetLoggerProvider(); an
// example shares its process with others, and the global provider hands
// its loggers over to the first provider ever set, once, so this one
// passes its provider directly and leaves the global alone.
func ExampleWithLoggerProvider() {
	provider := sdklog.NewLoggerProvider(sdklog.WithProcessor(printer{}))
	defer provider.Shutdown(context.Background())

	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithLoggerProvider(provider),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	// Output:
	// retry.attempt WARN retry.attempt=1 http.response.status_code=503 retry.decision=retry
	// retry.attempt INFO retry.attempt=2 http.response.status_code=200 retry.decision=return
	// retry.operation INFO retry.attempts=2 retry.outcome=return
}
