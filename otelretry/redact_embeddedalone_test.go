// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

type lockedLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// everyTelemetryText sends one GET of raw through NewTransport over a base
// that fails with mkErr(req), and returns Error(), every span's status,
// attributes and event attributes, and the log records.
func everyTelemetryText(t *testing.T, raw string, mkErr func(*http.Request) error) string {
	t.Helper()
	return telemetryTextOf(t, raw, nil, mkErr)
}

// telemetryTextOf is everyTelemetryText of a GET that carries the headers h.
func telemetryTextOf(t *testing.T, raw string, h http.Header, mkErr func(*http.Request) error) string {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var logs lockedLogBuffer
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, mkErr(r) })
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMaxAttempts(1),
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	_, err = tr.RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error(): %s\n", err.Error())
	for _, s := range rec.Ended() {
		fmt.Fprintf(&b, "span %s status: %s\n", s.Name(), s.Status().Description)
		for _, a := range s.Attributes() {
			fmt.Fprintf(&b, "  attr %s=%s\n", a.Key, a.Value.Emit())
		}
		for _, e := range s.Events() {
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, "  event %s %s=%s\n", e.Name, a.Key, a.Value.Emit())
			}
		}
	}
	fmt.Fprintf(&b, "logs: %s\n", logs.String())
	return b.String()
}

// A proxy's path that holds its target URL carries a userinfo: the
// request's own userinfo loses its password and a user name of 8 bytes or
// more wherever an error repeats them alone (spelledSecrets), and
// docs/telemetry.md ("Secrets") promises that a base's error "loses its
// URL's userinfo, percent-encoded or not (a target URL's in the path too,
// as a path or a query value escapes it, once or twice)". A base that
// prints the target's password or user name alone ("auth failed for …")
// must not carry it into Error(), a span or a log record.
func TestATargetURLsPasswordOrUserAloneInAnErrorIsRedacted(t *testing.T) {
	const (
		user   = "svc-admin-user"
		pass   = "S3cretPassw0rd"
		target = "https://" + user + ":" + pass + "@internal.test/x"
	)
	once := url.QueryEscape(target)
	paths := map[string]string{
		"own":          "http://" + user + ":" + pass + "@p.test/fetch/x",
		"plain":        "http://p.test/fetch/" + target,
		"escapedOnce":  "http://p.test/fetch/" + once,
		"escapedTwice": "http://p.test/fetch/" + url.QueryEscape(once),
	}
	errs := map[string]func(*http.Request) error{
		"password": func(*http.Request) error { return fmt.Errorf("auth failed for %s", pass) },
		"user":     func(*http.Request) error { return fmt.Errorf("user %s rejected", user) },
	}
	for pn, raw := range paths {
		for en, mk := range errs {
			t.Run(pn+"/"+en, func(t *testing.T) {
				got := everyTelemetryText(t, raw, mk)
				for _, secret := range []string{pass, user} {
					if strings.Contains(got, secret) {
						t.Errorf("%q reached telemetry:\n%s", secret, got)
					}
				}
			})
		}
	}
}

// A target URL's userinfo in the path, printed whole before its '@', goes
// whole, a short user name included: its password, taken out alone, must
// not leave the name beside it ("bob:REDACTED@").
func TestATargetURLsUserinfoWithAShortNameGoesWhole(t *testing.T) {
	const target = "https://bob:S3cretPassw0rd@internal.test/x"
	for name, raw := range map[string]string{
		"plain":       "http://p.test/fetch/" + target,
		"escapedOnce": "http://p.test/fetch/" + url.QueryEscape(target),
	} {
		t.Run(name, func(t *testing.T) {
			got := everyTelemetryText(t, raw, func(*http.Request) error {
				return errors.New("upstream bob:S3cretPassw0rd@internal.test refused") // the authority alone
			})
			if strings.Contains(got, "bob") || strings.Contains(got, "S3cretPassw0rd") {
				t.Errorf("the target's userinfo reached telemetry in part:\n%s", got)
			}
			if !strings.Contains(got, "REDACTED:REDACTED@internal.test") {
				t.Errorf("the target's userinfo is not replaced whole:\n%s", got)
			}
		})
	}
}
