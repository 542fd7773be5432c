// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

func TestSecretsNeverReachTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		h, events := newLogHarness(t, []scripted.Step{{Status: 503}, {Hang: true}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
			otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithMaxAttempts(2))
		atStart := &startAttributes{}
		h.tp.RegisterSpanProcessor(atStart)
		const sent = "http://alice:hunter2@api.test/v1/items?token=tok-SECRET-1&sig=SIG-SECRET-2&page=3"
		req := get(t, t.Context(), sent)
		req.Header.Set("Authorization", "Bearer AUTH-SECRET-3")
		req.Header.Set("Cookie", "session=COOKIE-SECRET-4")
		_, err := h.client.Do(req)
		if err == nil {
			t.Fatal("want an error after the timeout")
		}
		secrets := []string{"hunter2", "alice", "tok-SECRET-1", "SIG-SECRET-2", "AUTH-SECRET-3", "COOKIE-SECRET-4"}
		var dump strings.Builder
		for _, s := range h.ended() {
			fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events())
		}
		// What span processors see when a span starts (otelhttp's client
		// span records url.full then) is telemetry too.
		fmt.Fprintf(&dump, "%v\n", atStart.seen())
		var rerr *otelretry.Error
		errors.As(err, &rerr)
		dump.WriteString(rerr.Error())
		var eventDump strings.Builder
		for _, r := range events.records {
			fmt.Fprintf(&eventDump, "%s %v %v\n", r.EventName(), r.Body().Emit(), recordAttrs(r))
		}
		if !strings.Contains(eventDump.String(), "http://REDACTED:REDACTED@api.test/v1/items?token=REDACTED") {
			t.Errorf("log events lack the sanitized URL:\n%s", eventDump.String())
		}
		for _, where := range []struct{ name, text string }{{"spans", dump.String()}, {"logs", logs.String()}, {"log events", eventDump.String()}, {"error", rerr.Error()}} {
			for _, s := range secrets {
				if strings.Contains(where.text, s) {
					t.Errorf("%s contain the secret %q", where.name, s)
				}
			}
		}
		// Credentials become REDACTED:REDACTED, as the semantic conventions
		// ask for url.full.
		const clean = "http://REDACTED:REDACTED@api.test/v1/items?token=REDACTED&sig=REDACTED&page=REDACTED"
		for _, s := range h.ended() {
			if v, ok := attrValue(s.Attributes(), attrs.URLFullKey); ok && v != clean {
				t.Errorf("span %q url.full = %q, want %q", s.Name(), v, clean)
			}
		}
		if got := attrOf(h.operation(t), attrs.URLFullKey).AsString(); got != clean {
			t.Errorf("operation url.full = %q", got)
		}
		if !strings.Contains(logs.String(), clean) {
			t.Errorf("logs lack the sanitized URL:\n%s", logs.String())
		}
		// The server still gets the URL as sent, credentials and all.
		for i, c := range h.base.Calls() {
			if c.URL != sent {
				t.Errorf("call %d went to %q, want %q", i+1, c.URL, sent)
			}
		}
	})
}

// startAttributes is a SpanProcessor that keeps the attributes every span
// has when it starts.
type startAttributes struct {
	mu    sync.Mutex
	attrs [][]attribute.KeyValue
}

func (p *startAttributes) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attrs = append(p.attrs, s.Attributes())
}

func (p *startAttributes) seen() [][]attribute.KeyValue {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attrs
}

func (*startAttributes) OnEnd(sdktrace.ReadOnlySpan)      {}
func (*startAttributes) Shutdown(context.Context) error   { return nil }
func (*startAttributes) ForceFlush(context.Context) error { return nil }
