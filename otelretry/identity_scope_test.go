// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A call a PrepareAttemptFunc makes with the request's context (a token
// fetch) is an operation of its own, given no Intent and no id: every
// function of the user's that runs for it is told so, its hooks and its
// operation's alike (Budget.Key, the labeler, the span name formatter, a
// span processor's OnStart, a slog handler), never the calling
// operation's Intent and id, which the caller's own functions are told
// (before: the operation's functions read the caller's, through the
// operation's context).
func TestAHooksCallsFunctionsAreToldItsOwnScope(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	var mu sync.Mutex
	seen := map[string][]string{} // "path fn" -> what it read
	note := func(fn string, r *http.Request) {
		in, iok := otelretry.IntentFromContext(r.Context())
		id, ook := otelretry.OperationIDFromContext(r.Context())
		s := "none"
		if iok || ook {
			s = fmt.Sprintf("intent=%v(%+v) id=%v(%q)", iok, in.MaxAttempts, ook, id)
		}
		mu.Lock()
		seen[r.URL.Path+" "+fn] = append(seen[r.URL.Path+" "+fn], s)
		mu.Unlock()
	}
	var client *http.Client
	prepare := func(r *http.Request, n int) error {
		note("prepare", r)
		if r.URL.Path == "/token" {
			return nil
		}
		tr, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://auth.test/token", nil)
		resp, err := client.Do(tr)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	classifier := func(a otelretry.Answer) otelretry.Classification {
		note("classifier", a.Request)
		return otelretry.Classification{}
	}
	budget := &otelretry.Budget{Key: func(r *http.Request) string { note("budget.Key", r); return r.URL.Host }}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(onStartFunc(func(ctx context.Context, sp sdktrace.ReadWriteSpan) {
		for _, kv := range sp.Attributes() {
			if kv.Key == attrs.URLFullKey && strings.HasSuffix(kv.Value.AsString(), "/token") && sp.Name() == "op" {
				r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://auth.test/token", nil)
				note("spanProcessor.OnStart(operation span)", r)
			}
		}
	})))
	logged := slogFunc(func(ctx context.Context, rec slog.Record) {
		var url, opID string
		rec.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case string(attrs.URLFullKey):
				url = a.Value.String()
			case string(attrs.OperationIDKey):
				opID = a.Value.String()
			}
			return true
		})
		if strings.HasSuffix(url, "/token") {
			if id, ok := otelretry.OperationIDFromContext(ctx); ok && id != opID {
				mu.Lock()
				seen["/token slogRecordMismatch"] = append(seen["/token slogRecordMismatch"], fmt.Sprintf("record of %s handed a context whose OperationIDFromContext is %q", opID, id))
				mu.Unlock()
			}
		}
	})
	tr := otelretry.NewTransport(base, otelretry.WithBudget(budget), otelretry.WithTracerProvider(tp), otelretry.WithLogger(slog.New(logged)),
		otelretry.WithPrepareAttempt(prepare), otelretry.WithClassifier(classifier),
		otelretry.WithMetricAttributes(func(r *http.Request) []attribute.KeyValue { note("labeler", r); return nil }),
		otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string { note("attemptSpanName", r); return "GET" }),
		otelretry.WithSpanNameFormatter(func(r *http.Request) string { note("spanName", r); return "op" }),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	client = &http.Client{Transport: tr}

	ctx := otelretry.WithOperationID(otelretry.WithIntent(t.Context(), otelretry.Intent{MaxAttempts: 5}), "op-outer")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/data", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	mu.Lock()
	defer mu.Unlock()
	for _, m := range seen["/token slogRecordMismatch"] {
		t.Errorf("slog handler: %s (the calling operation's id)", m)
	}
	for _, fn := range []string{"budget.Key", "labeler", "spanName"} {
		if got := seen["/data "+fn]; len(got) == 0 || got[0] != `intent=true(5) id=true("op-outer")` {
			t.Errorf("the caller's %s read %q, want its Intent and id", fn, got)
		}
	}
	for _, fn := range []string{"prepare", "classifier", "budget.Key", "labeler", "spanName", "spanProcessor.OnStart(operation span)"} {
		got := seen["/token "+fn]
		if len(got) == 0 {
			t.Errorf("%s never called for /token", fn)
		}
		for _, s := range got {
			if s != "none" {
				t.Errorf("the token fetch's %s read %s from its request's context; the fetch is an operation of its own given no Intent and no id (the calling operation's are not its own)", fn, s)
				break
			}
		}
	}
}

type onStartFunc func(context.Context, sdktrace.ReadWriteSpan)

func (f onStartFunc) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { f(ctx, s) }
func (onStartFunc) OnEnd(sdktrace.ReadOnlySpan)                             {}
func (onStartFunc) Shutdown(context.Context) error                          { return nil }
func (onStartFunc) ForceFlush(context.Context) error                        { return nil }

type slogFunc func(context.Context, slog.Record)

func (slogFunc) Enabled(context.Context, slog.Level) bool          { return true }
func (h slogFunc) Handle(ctx context.Context, r slog.Record) error { h(ctx, r); return nil }
func (h slogFunc) WithAttrs([]slog.Attr) slog.Handler              { return h }
func (h slogFunc) WithGroup(string) slog.Handler                   { return h }
