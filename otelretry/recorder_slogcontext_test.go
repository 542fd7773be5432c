// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

type slogRecord struct {
	level   slog.Level
	msg     string
	attrs   map[string]string
	ctxSpan trace.SpanContext
}

type contextSlogHandler struct {
	mu   sync.Mutex
	recs []slogRecord
	min  slog.Level
}

func (h *contextSlogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h *contextSlogHandler) Handle(ctx context.Context, r slog.Record) error {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, slogRecord{r.Level, r.Message, m, trace.SpanContextFromContext(ctx)})
	return nil
}
func (h *contextSlogHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *contextSlogHandler) WithGroup(string) slog.Handler      { return h }

func (h *contextSlogHandler) named(msg string) []slogRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slogRecord
	for _, r := range h.recs {
		if r.msg == msg {
			out = append(out, r)
		}
	}
	return out
}

func kvString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, m[k])
	}
	return b.String()
}

// Each slog attempt record carries the same fields, at the same level, as
// the OTel log event of the same attempt, and the ids of its attempt span,
// and no secret, in six scenarios (a reviewer's table, adopted as it held).
func TestSlogRecordsMatchLogEvents(t *testing.T) {
	reset := &scripted.Step{Err: syscall.ECONNRESET}
	cases := []struct {
		name  string
		steps []scripted.Step
		opts  []otelretry.Option
		req   func(t *testing.T) *http.Request
	}{
		{"retry", []scripted.Step{{Status: 503}, {Status: 200}}, nil, func(t *testing.T) *http.Request { return get(t, t.Context(), "http://u:pw@api.test/v1?token=s3cret") }},
		{"max_attempts", []scripted.Step{{Status: 503}, {Status: 503}}, []otelretry.Option{otelretry.WithMaxAttempts(2)}, func(t *testing.T) *http.Request { return get(t, t.Context(), "http://api.test/v1") }},
		{"check_state", []scripted.Step{*reset}, nil, func(t *testing.T) *http.Request { return post(t, t.Context(), "http://api.test/v1", "body-secret") }},
		{"bad_retry_after", []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"soon-secret"}}}, {Status: 200}}, nil, func(t *testing.T) *http.Request { return get(t, t.Context(), "http://api.test/v1") }},
		{"budget", []scripted.Step{{Status: 503}, {Status: 503}}, []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Tokens: 1}), otelretry.WithMaxAttempts(3)}, func(t *testing.T) *http.Request { return get(t, t.Context(), "http://api.test/v1") }},
		{"deadline", []scripted.Step{{Hang: true}}, nil, func(t *testing.T) *http.Request {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return get(t, ctx, "http://api.test/v1")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sh := &contextSlogHandler{min: slog.LevelDebug}
			opts := append([]otelretry.Option{otelretry.WithLogger(slog.New(sh)), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, c.opts...)
			h, lr := newLogHarness(t, c.steps, opts...)
			resp, err := h.transprt.RoundTrip(c.req(t))
			if err == nil {
				resp.Body.Close()
			}
			events := lr.named(attrs.LogEventAttempt)
			recs := sh.named("retry attempt")
			if len(events) != len(recs) {
				t.Fatalf("%d slog attempt records, %d log events", len(recs), len(events))
			}
			for i, ev := range events {
				want := map[string]string{}
				for k, v := range recordAttrs(ev) {
					want[string(k)] = v.Emit()
				}
				want["trace_id"] = ev.TraceID().String()
				want["span_id"] = ev.SpanID().String()
				got := recs[i].attrs
				if kvString(got) != kvString(want) {
					t.Errorf("attempt %d:\n slog  %s\n event %s", i+1, kvString(got), kvString(want))
				}
				if recs[i].level.String() != ev.SeverityText() {
					t.Errorf("attempt %d: slog level %v, event %s", i+1, recs[i].level, ev.SeverityText())
				}
				all := kvString(got)
				for _, s := range []string{"pw", "s3cret", "body-secret"} {
					if strings.Contains(all, s) {
						t.Errorf("secret %q in slog record %s", s, all)
					}
				}
			}
		})
	}
}

// The context WithLogger hands to the handler's Handle holds the span
// whose ids the record carries (the attempt span), as the log event's
// context does, so that a handler reading the span from the context (an
// OTel slog bridge) links the record to it (a reviewer's find: it held the
// operation span).
func TestSlogHandleContextIsAttemptSpan(t *testing.T) {
	sh := &contextSlogHandler{min: slog.LevelDebug}
	h, lr := newLogHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
		otelretry.WithLogger(slog.New(sh)), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	op := h.operation(t).SpanContext().SpanID()
	events := lr.named(attrs.LogEventAttempt)
	for i, r := range sh.named("retry attempt") {
		if got := r.ctxSpan.SpanID(); got.String() != r.attrs["span_id"] {
			t.Errorf("attempt %d: Handle's ctx holds span %s (operation span: %v), record span_id=%s, log event's context span %s",
				i+1, got, got == op, r.attrs["span_id"], events[i].SpanID())
		}
	}
}
