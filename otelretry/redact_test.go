// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestSanitizeURL pins the public contract of what the library records as
// url.full: userinfo, query values, fragment, Opaque userinfo. The
// sanitizer itself (internal/redact) has the full table of edge cases and
// a fuzz target; SanitizeURL only delegates to it.
func TestSanitizeURL(t *testing.T) {
	cases := map[string]string{
		"https://u:p@h.test/a?x=1&y=&z":         "https://REDACTED:REDACTED@h.test/a?x=REDACTED&y=REDACTED&z",
		"http://u@h.test/p?x=1#frag":            "http://REDACTED:REDACTED@h.test/p?x=REDACTED",
		"http://h.test/":                        "http://h.test/",
		"http:user:pw@h.test/p":                 "http:REDACTED:REDACTED@h.test/p",
		"http://h.test/p?tok=" + attrs.Redacted: "http://h.test/p?tok=REDACTED",
	}
	for in, want := range cases {
		if got := otelretry.SanitizeURL(mustURL(t, in)); got != want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := otelretry.SanitizeURL(nil); got != "" {
		t.Errorf("SanitizeURL(nil) = %q, want \"\"", got)
	}
}

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

// Spans, logs and errors record the prepared request sanitized: the
// userinfo, query token and Authorization header a PrepareAttemptFunc adds (a
// presigned URL) reach the server, and no span (at its start or end), log
// record or error.
func TestPreparedSecretsNeverReachTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503}, {Err: errors.New(`dial: Get "http://bob:PREP-PASS@api.test/v1?token=PREP-TOKEN": refused`)}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithMaxAttempts(2),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.URL.User = url.UserPassword("bob", "PREP-PASS")
				r.URL.RawQuery = "token=PREP-TOKEN"
				r.Header.Set("Authorization", "Bearer PREP-AUTH")
				return nil
			}))
		atStart := &startAttributes{}
		h.tp.RegisterSpanProcessor(atStart)
		_, err := h.client.Do(get(t, t.Context(), "http://api.test/v1"))
		if err == nil {
			t.Fatal("want an error")
		}
		var dump strings.Builder
		for _, s := range h.ended() {
			fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events())
		}
		fmt.Fprintf(&dump, "%v\n%s\n%s", atStart.seen(), logs.String(), err.Error())
		for _, s := range []string{"PREP-PASS", "PREP-TOKEN", "PREP-AUTH"} {
			if strings.Contains(dump.String(), s) {
				t.Errorf("telemetry or error contains %q", s)
			}
		}
		if c := h.base.Calls(); len(c) == 0 || !strings.Contains(c[0].URL, "PREP-TOKEN") {
			t.Errorf("the server did not get the prepared URL: %v", c)
		}
	})
}

// A PrepareAttemptFunc's error (a token refresh that failed with the *url.Error
// net/http's Client returns) reaches the caller sanitized: Error.Error
// holds neither that URL's nor the request's userinfo and query values.
func TestPrepareFuncErrorIsSanitized(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
		return &url.Error{Op: "Post", URL: "https://bob:PW-SECRET@auth.test/token?client_secret=CS-SECRET", Err: errors.New("connection refused")}
	}))
	req := get(t, t.Context(), "https://alice:hunter2@api.test/v1?token=TOK-SECRET")
	_, err := h.transprt.RoundTrip(req)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, s := range []string{"PW-SECRET", "CS-SECRET", "hunter2", "TOK-SECRET"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q leaks %q", err, s)
		}
	}
}

// A base's *url.Error carries the raw URL; neither the returned error nor
// the attempt span's status description may repeat its userinfo or query.
func TestBaseURLErrorsAreSanitized(t *testing.T) {
	raw := "http://alice:s3cret@api.test/v1/items?token=tok-123&page=2"
	h := newHarness(t, []scripted.Step{{Err: &url.Error{Op: "Get", URL: raw, Err: errors.New("connection lost")}}},
		otelretry.WithMaxAttempts(1))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, raw, strings.NewReader("x"))
	_, err := h.transprt.RoundTrip(req)
	if err == nil {
		t.Fatal("want an error")
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("the base's *url.Error is not reachable with errors.As: %v", err)
	}
	texts := []string{err.Error()}
	for _, s := range h.ended() {
		texts = append(texts, s.Status().Description)
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, kv := range s.Attributes() {
			texts = append(texts, kv.Value.Emit())
		}
	}
	for _, text := range texts {
		for _, secret := range []string{"s3cret", "tok-123", "alice"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaks %q", text, secret)
			}
		}
	}
	if !strings.Contains(err.Error(), "connection lost") {
		t.Errorf("err = %q, lost the cause", err)
	}
}

// A base (or a hook) whose error prints the request it was given leaks
// nothing of it: not the URL's password as *url.Userinfo prints it
// (percent-encoded; the decoded one alone was replaced, so the text read
// "REDACTED:wJalrXUtnFEMI%2FK7MDENG"), nor the values of its credential
// headers (docs/telemetry.md: "otelretry records no header's value, on
// any channel"), the caller's or those a PrepareAttemptFunc added.
func TestABasesErrorThatPrintsTheRequestLeaksNoCredential(t *testing.T) {
	h := newHarness(t, nil)
	rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("proxy refused %s with %v", r.URL.User, r.Header)
	}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1),
		otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
			r.Header.Set("X-Amz-Security-Token", "PREP-SESSION-TOKEN")
			return nil
		}))
	req := get(t, t.Context(), "http://alice:wJalrXUtnFEMI%2FK7MDENG@api.test/v1")
	req.Header.Set("Authorization", "Bearer AUTH-SECRET-1")
	req.Header.Set("Cookie", "theme=dark; session=COOKIE-SECRET-2")
	_, err := rt.RoundTrip(req)
	if err == nil {
		t.Fatal("want an error")
	}
	texts := []string{err.Error()}
	for _, s := range h.ended() {
		texts = append(texts, s.Status().Description)
	}
	for _, text := range texts {
		for _, secret := range []string{"alice", "wJalrXUtnFEMI", "K7MDENG", "AUTH-SECRET-1", "COOKIE-SECRET-2", "PREP-SESSION-TOKEN"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaks %q", text, secret)
			}
		}
	}
	if !strings.Contains(err.Error(), "proxy refused") {
		t.Errorf("err = %q, lost the cause", err)
	}
}

// A proxy's path that holds its target URL escaped (as url.QueryEscape
// writes it, or twice, as each forwarding layer escapes it again) loses
// that URL's userinfo on both spans (url.full) and in a base's error that
// prints the request line as sent (httputil.DumpRequest). Before, the
// error kept it escaped once, and url.full kept it escaped twice.
func TestAnEscapedTargetURLInAProxysPathLeaksNoCredential(t *testing.T) {
	const secret = "S3cretPw"
	target := "https://admin:" + secret + "@internal.test/x"
	for _, path := range []string{url.QueryEscape(target), url.PathEscape(url.PathEscape(target)), url.QueryEscape(url.QueryEscape(target)),
		url.QueryEscape(url.QueryEscape(target)) + "/50%25"} { // a lone '%' in another segment
		h := newHarness(t, nil)
		rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			dump, _ := httputil.DumpRequest(r, false)
			return nil, fmt.Errorf("proxy refused the request:\n%s", dump)
		}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1))
		_, err := rt.RoundTrip(get(t, t.Context(), "http://proxy.test/fetch/"+path))
		if err == nil {
			t.Fatal("want an error")
		}
		texts := []string{err.Error()}
		for _, s := range h.ended() {
			texts = append(texts, s.Status().Description)
			for _, kv := range s.Attributes() {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, text := range texts {
			if strings.Contains(text, secret) {
				t.Errorf("%s: %q leaks the target's password", path, text)
			}
		}
		if !strings.Contains(err.Error(), "proxy refused") {
			t.Errorf("err = %q, lost the cause", err)
		}
	}
}

// brokenStream is a response body whose read fails with err, and whose
// Close with closeErr.
type brokenStream struct{ err, closeErr error }

func (b brokenStream) Read([]byte) (int, error) { return 0, b.err }
func (b brokenStream) Close() error             { return b.closeErr }

// A response body's read error that prints the request kept its
// credential headers' values, which reached the caller and the CLIENT
// span's status; a base's error is scrubbed of them (above). Its Close
// error was not sanitized at all, the URL's userinfo included.
func TestABodysErrorsThatPrintTheRequestLeakNoCredential(t *testing.T) {
	h := newHarness(t, nil)
	rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r, ContentLength: -1,
			Body: brokenStream{fmt.Errorf("stream of %s %v broke: %w", r.URL.Path, r.Header, io.ErrUnexpectedEOF),
				fmt.Errorf("closing the stream of %s %v: connection reset", r.URL, r.Header)}}, nil
	}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1))
	req := get(t, t.Context(), "http://alice:PW-SECRET-3@api.test/v1?token=TOKEN-SECRET-4")
	req.Header.Set("Authorization", "Bearer AUTH-SECRET-1")
	req.Header.Set("Cookie", "theme=dark; session=COOKIE-SECRET-2")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, readErr := io.ReadAll(resp.Body)
	closeErr := resp.Body.Close()
	if !errors.Is(readErr, io.ErrUnexpectedEOF) || closeErr == nil {
		t.Fatalf("read error %v, close error %v; want one that wraps io.ErrUnexpectedEOF, and one", readErr, closeErr)
	}
	texts := []string{readErr.Error(), closeErr.Error()}
	for _, s := range h.ended() {
		texts = append(texts, s.Status().Description)
	}
	for _, text := range texts {
		for _, secret := range []string{"AUTH-SECRET-1", "COOKIE-SECRET-2", "PW-SECRET-3", "TOKEN-SECRET-4"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaks %q", text, secret)
			}
		}
	}
}

// A redirector's URL that carries its target escaped whole after the '?'
// ("/go?https%3A%2F%2Fadmin%3Apw%40internal.test%2F"): docs/telemetry.md
// says userinfo becomes REDACTED:REDACTED "in a proxy's path that holds
// its target URL, as written or escaped ... in any spelling", and that an
// error that prints the request "loses its URL's userinfo, percent-encoded
// or not (a target URL's in the path too, as a path or a query value
// escapes it ...)". After a bare '?' too: the target's password reached
// url.full on every span and Error().
func TestATargetEscapedAfterABareQuestionMarkReachesNoTelemetry(t *testing.T) {
	const pw = "PWSEKRITQ"
	raw := "http://proxy.test/go?https%3A%2F%2Fadmin%3A" + pw + "%40internal.test%2Fx"
	rec := tracetest.NewSpanRecorder()
	client := &http.Client{Transport: otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("dial %s: connection refused", r.URL)
	}),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithMaxAttempts(1), otelretry.WithDeadline(2*time.Second))}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, raw, nil)
	_, err := client.Do(req)
	if err == nil {
		t.Fatal("want the base's error")
	}
	var rerr *otelretry.Error
	if errors.As(err, &rerr) && strings.Contains(rerr.Error(), pw) {
		t.Errorf("Error() keeps the password: %s", rerr.Error())
	}
	for _, s := range rec.Ended() {
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.Emit(), pw) {
				t.Errorf("span %q %s = %s", s.Name(), a.Key, a.Value.Emit())
			}
		}
		if strings.Contains(s.Status().Description, pw) {
			t.Errorf("span %q status: %s", s.Name(), s.Status().Description)
		}
	}
	// SanitizeURL, what url.full is, keeps it too.
	if got := otelretry.SanitizeURL(req.URL); strings.Contains(got, pw) {
		t.Errorf("SanitizeURL = %s", got)
	}
}
