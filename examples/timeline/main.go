// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

// run plays both timelines and writes their event tables to w.
func run(ctx context.Context, w io.Writer) error {
	seed := []otelretry.Option{
		otelretry.WithMaxAttempts(3),
		otelretry.WithDeadline(400 * time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(40 * time.Millisecond)),
	}
	read := scripted.New(
		scripted.Step{Delay: 80 * time.Millisecond, Status: 503},
		scripted.Step{Delay: 80 * time.Millisecond, Status: 503},
		scripted.Step{Delay: 50 * time.Millisecond, Status: 200, Body: "ok"},
	)
	if err := play(ctx, w, "read", read, http.MethodGet, "op-42", seed); err != nil {
		return err
	}
	fmt.Fprintln(w)
	// The network gives no answer: after 120ms the base gives up waiting,
	// as an http.Transport's ResponseHeaderTimeout does. (otelretry's own
	// attempt timeout does not cut a write's wait: it could not retry it.)
	write := scripted.New(scripted.Step{Delay: 120 * time.Millisecond, Err: errNoAnswer})
	return play(ctx, w, "write", write, http.MethodPost, "op-43", seed)
}

// errNoAnswer is the base's timeout: a net.Error whose Timeout is true.
var errNoAnswer error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

func play(ctx context.Context, w io.Writer, name string, base *scripted.Transport, method, opID string, opts []otelretry.Option) error {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(ctx)
	client := &http.Client{Transport: otelretry.NewTransport(base, append(opts,
		otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans())...)}

	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"sku":"A-1","qty":1}`)
	}
	req, err := http.NewRequestWithContext(otelretry.WithOperationID(ctx, opID), method, "http://dependency.test/orders", body)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	result := ""
	switch {
	case err == nil:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		result = fmt.Sprintf("response %d (received from the dependency)", resp.StatusCode)
	case errors.Is(err, otelretry.ErrOutcomeUnknown):
		result = "error: outcome unknown, not resent (ErrOutcomeUnknown)"
	default:
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) {
			return err
		}
		result = "error: " + string(rerr.Outcome)
	}

	spans := rec.Ended()
	fmt.Fprintf(w, "%s timeline (%s)\n", name, method)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operationId\trequestId\tattempt\tmethod\tstatus\terrorClass\telapsedMs\tremainingMs\tretryAfterMs\tdecision")
	for _, s := range spantest.Attempts(spans) {
		v := func(k attribute.Key) string { return field(s, k) }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			v(attrs.OperationIDKey), v(attrs.RequestIDKey), v(attrs.AttemptKey), v(attrs.HTTPRequestMethodKey),
			v(attrs.HTTPResponseStatusCodeKey), v(attrs.ErrorClassKey), v(attrs.ElapsedMsKey), v(attrs.RemainingMsKey),
			v(attrs.RetryAfterMsKey), v(attrs.DecisionKey))
	}
	tw.Flush()
	ops := spantest.Operations(spans)
	if len(ops) != 1 {
		return fmt.Errorf("%s: %d operation spans, want 1", name, len(ops))
	}
	fmt.Fprintf(w, "outcome: %s; network calls: %d; %s\n", field(ops[0], attrs.OutcomeKey), len(base.Calls()), result)
	return nil
}

// field renders an attribute, or "null" when the span does not carry it:
// an absent status or error class is a fact, not a zero.
func field(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	if v, ok := spantest.Attr(s, k); ok {
		return v.Emit()
	}
	return "null"
}
