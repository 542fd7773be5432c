// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// errorTelemetry sends one request of method to raw (headers hdr) through
// NewTransport over base, and returns Error() and, per line, every span's
// name, status, attributes and events and every log record.
func errorTelemetry(t *testing.T, method, raw string, hdr http.Header, base http.RoundTripper, opts ...otelretry.Option) (string, string) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	logs := &logRecorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(logs))
	defer func() { _ = lp.Shutdown(context.Background()) }()
	tr := otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithTracerProvider(tp),
		otelretry.WithLoggerProvider(lp), otelretry.WithMaxAttempts(1)}, opts...)...)
	req, err := http.NewRequestWithContext(t.Context(), method, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	_, err = tr.RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	var b strings.Builder
	for _, s := range rec.Ended() {
		fmt.Fprintf(&b, "span %s status: %s attrs: %v events: %v\n", s.Name(), s.Status().Description, s.Attributes(), s.Events())
	}
	for _, r := range logs.records {
		fmt.Fprintf(&b, "log %s %v %v\n", r.EventName(), r.Body().Emit(), recordAttrs(r))
	}
	return err.Error(), b.String()
}

func failingWith(mk func(*http.Request) error) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, mk(r) })
}

// Over-redaction: the request URL's user name was replaced wherever the
// error's text holds it, at any length, so that an ordinary error was
// garbled where it is not a secret at all: the user name "api" (Mailgun's
// basic-auth user) takes the host out of a DNS error although url.full
// records that host, and a one-letter user name ("u", "x") takes letters
// out of "connection refused". Query and fragment values are replaced
// alone only from 8 bytes on, for that very reason (docs/telemetry.md:
// "A short one written as it is would match prose").
func TestAShortUserNameDoesNotGarbleAnOrdinaryError(t *testing.T) {
	addr := refusedAddr(t) // a real "connection refused"
	dialer := &http.Transport{DisableKeepAlives: true}
	defer dialer.CloseIdleConnections()
	for _, c := range []struct {
		name, raw string
		base      http.RoundTripper
		want      string
	}{
		{"dns", "https://api:key-SECRETKEY1234@api.mailgun.test/v3/domains",
			failingWith(func(*http.Request) error { return fmt.Errorf("dial tcp: lookup api.mailgun.test: no such host") }),
			"lookup api.mailgun.test: no such host"},
		{"refused", "http://u:ghp_SECRETTOKEN1234@" + addr + "/v1", dialer, "connect: connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodGet, c.raw, nil, c.base)
			if !strings.Contains(msg, c.want) {
				t.Errorf("Error() = %q\nwant it to hold %q (nothing secret in it)", msg, c.want)
			}
			if !strings.Contains(tel, c.want) {
				t.Errorf("the attempt span's status lost %q:\n%s", c.want, tel)
			}
		})
	}
}

// docs/telemetry.md: an error that prints the request loses "the values
// of its credential headers ... each value whole", and "otelretry records
// no header's value, on any channel" but an idempotency key's under
// WithIdempotencyKeyValues. A value of 1 to 3 bytes (an API key, or an
// idempotency key that is an order number) was kept: credentialSecrets
// replaces a whole value only from 4 bytes on.
func TestAShortCredentialOrKeyValueReachesNoTelemetry(t *testing.T) {
	// Values no hexadecimal id can hold: the operation id is in the text.
	hdr := http.Header{"X-Api-Key": {"k9z"}, "Idempotency-Key": {"7q2"}}
	for name, print := range map[string]func(h http.Header) string{
		"fmt": func(h http.Header) string { return fmt.Sprint(h) },
		"wire": func(h http.Header) string {
			var b strings.Builder
			_ = h.Write(&b)
			return b.String()
		},
		"json": func(h http.Header) string { js, _ := json.Marshal(h); return string(js) },
	} {
		t.Run(name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodPost, "https://api.test/v1/orders", hdr,
				failingWith(func(r *http.Request) error { return fmt.Errorf("upstream rejected headers %s", print(r.Header)) }),
				otelretry.WithIdempotencyKeyContract("Idempotency-Key"))
			for _, secret := range []string{"k9z", "7q2"} {
				if strings.Contains(msg, secret) || strings.Contains(tel, secret) {
					t.Errorf("header value %s reached telemetry; Error() = %q", secret, msg)
				}
			}
		})
	}
}

// A URL without a scheme whose userinfo is a token alone (no ':'), as git
// prints one ("//ghp_TOKEN@github.com/o/r.git", which the CHANGELOG's
// Unreleased "Fixed" entries sanitize), keeps its token when url.Parse
// rejects the word: a sentence's period after a port ("…:8443."), or a
// '%' that begins no escape in the path. The same URL with a ':' in its
// userinfo, or with a scheme, is redacted; the path holds no '@' here,
// so this is not the case the docs leave (a path's '@').
func TestASchemelessTokenBeforeAnUnparsableTailIsRedacted(t *testing.T) {
	for name, text := range map[string]string{
		"period": "unable to access //ghp_SCHEMELESSTOKEN1@git.test:8443.",
		"bang":   "unable to access //ghp_SCHEMELESSTOKEN1@git.test:8443!",
		"pct":    "unable to access //ghp_SCHEMELESSTOKEN1@git.test/o/r/50% done",
	} {
		t.Run(name, func(t *testing.T) {
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
				failingWith(func(*http.Request) error { return fmt.Errorf("fetch: %s", text) }))
			if strings.Contains(msg, "SCHEMELESSTOKEN1") || strings.Contains(tel, "SCHEMELESSTOKEN1") {
				t.Errorf("the token reached telemetry; Error() = %q", msg)
			}
		})
	}
}

// docs/telemetry.md and the CHANGELOG (2ee0a85): a credential header's
// value shorter than 4 bytes "is replaced where the header is printed
// with it (fmt's, the wire's and encoding/json's forms of an
// http.Header)". fmt's %#v and %q, encoding/json's MarshalIndent, and the
// wire's form of a value the caller wrote with a leading space (which
// Header.Write and httputil.DumpRequestOut trim, while the length check
// trims it too) print the header with its value, and the value reaches
// Error() and the span status.
func TestAShortCredentialValueReachesNoTelemetryWhereItsHeaderIsPrinted(t *testing.T) {
	wire := func(h http.Header) string {
		var b strings.Builder
		_ = h.Write(&b)
		return b.String()
	}
	for name, c := range map[string]struct {
		values []string
		print  func(h http.Header) string
	}{
		"fmt %#v":           {[]string{"k9z"}, func(h http.Header) string { return fmt.Sprintf("%#v", h) }},
		"fmt %q two values": {[]string{"k9z", "q7w"}, func(h http.Header) string { return fmt.Sprintf("%q", h) }},
		"json indented": {[]string{"k9z"}, func(h http.Header) string {
			js, _ := json.MarshalIndent(h, "", "  ")
			return string(js)
		}},
		"wire, a leading space": {[]string{" k9z"}, wire},
		"wire in lower case":    {[]string{"k9z"}, func(h http.Header) string { return strings.ToLower(wire(h)) }},
		"fmt, a long value too": {[]string{"k9z", "LONGVALUE1"}, func(h http.Header) string { return fmt.Sprint(h) }},
	} {
		t.Run(name, func(t *testing.T) {
			hdr := http.Header{"X-Api-Key": c.values}
			var printed string
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1/orders", hdr,
				failingWith(func(r *http.Request) error {
					printed = c.print(r.Header)
					return fmt.Errorf("upstream rejected headers %s", printed)
				}))
			for _, v := range c.values {
				v = strings.TrimSpace(v)
				if strings.Contains(msg, v) || strings.Contains(tel, v) {
					t.Errorf("X-Api-Key value %q reached telemetry; the base printed %q\nError() = %q", v, printed, msg)
				}
			}
		})
	}
}

// docs/telemetry.md: a credential header's value "from 4 bytes wherever it
// appears and a shorter one where the header is printed with it, as fmt,
// the wire and encoding/json print a header"; the CHANGELOG: "it is
// replaced where the header is printed with it ... among the
// punctuation fmt (%v, %q, %#v), encoding/json ... and the wire write
// around its values". A short value that holds one of that punctuation
// itself (a space, a ':', a ',', a '"'), or that encoding/json escapes
// ('<'), was split into words none of which is the value, and kept
// whole: a value is matched as each print spells it, before the words
// around it are read.
func TestAShortCredentialValueWithPunctuationReachesNoTelemetry(t *testing.T) {
	wire := func(h http.Header) string {
		var b strings.Builder
		_ = h.Write(&b)
		return b.String()
	}
	fmtv := func(h http.Header) string { return fmt.Sprint(h) }
	for name, c := range map[string]struct {
		header, value string
		print         func(http.Header) string
	}{
		"Authorization with a space, fmt": {"Authorization", "a b", fmtv},
		"X-Api-Key with a space, wire":    {"X-Api-Key", "a b", wire},
		"X-Session-Id with a colon, fmt":  {"X-Session-Id", "7:9", fmtv},
		"Idempotency-Key with a comma":    {"Idempotency-Key", "1,2", wire},
		"X-Api-Key quoted, fmt":           {"X-Api-Key", `"7"`, fmtv},
		"X-Api-Key json-escaped":          {"X-Api-Key", "<1>", func(h http.Header) string { js, _ := json.Marshal(h); return string(js) }},
	} {
		t.Run(name, func(t *testing.T) {
			var printed string
			msg, tel := errorTelemetry(t, http.MethodPost, "https://api.test/v1/orders", http.Header{c.header: {c.value}},
				failingWith(func(r *http.Request) error {
					printed = c.print(r.Header)
					return fmt.Errorf("upstream rejected headers %s", printed)
				}),
				otelretry.WithIdempotencyKeyContract("Idempotency-Key"))
			// The value as the print spelled it, with the header's name.
			asPrinted := strings.TrimSpace(printed[strings.Index(printed, c.header):])
			if strings.Contains(msg, asPrinted) || strings.Contains(tel, asPrinted) {
				t.Errorf("%s value %q reached telemetry; the base printed %q\nError() = %q", c.header, c.value, printed, msg)
			}
		})
	}
}

// scrubShortValues' doc: "Linear in msg for each such header", and
// docs/telemetry.md: the sanitizer runs "in time linear in the text". A
// server's text (here 1 MiB that repeats a short-valued credential
// header's name with no punctuation between) makes scrubAfterName read,
// at each occurrence of the name, the word after it to the end of the
// text, was quadratic (128 KiB took 2.8 s, 1 MiB minutes). Run with
// -timeout 20s: linear, this takes well under a second (a word is read no
// further than a value may be long).
func TestShortValueScrubIsLinearOnAServersText(t *testing.T) {
	text := strings.Repeat("X-Api-Key", (1<<20)/len("X-Api-Key"))
	msg, _ := errorTelemetry(t, http.MethodGet, "https://api.test/v1/orders", http.Header{"X-Api-Key": {"k9z"}},
		failingWith(func(*http.Request) error { return fmt.Errorf("upstream said %s", text) }))
	if strings.Contains(msg, "k9z") {
		t.Errorf("the value reached Error()")
	}
}

// A credential header whose value is a lone double quote (a 1-byte value,
// which net/http sends: '"' is a valid field-value character) makes any
// failed request panic inside RoundTrip: printedValuesOf strips the
// quotes of each spelling that begins with '"', and the value as written,
// `"`, is sliced [1:0]. The base is net/http's Transport, refused on
// 127.0.0.1: an ordinary error that prints no header at all. CHANGELOG [Unreleased] Fixed claims a short value
// "holding ... '\"'" is matched as each print spells it.
func TestALoneQuoteCredentialValueDoesNotPanic(t *testing.T) {
	addr := refusedAddr(t) // a real "connection refused" from net/http's own Transport, which sends such a value
	dialer := &http.Transport{DisableKeepAlives: true}
	defer dialer.CloseIdleConnections()
	for _, header := range []string{"X-Api-Key", "Authorization"} {
		t.Run(header, func(t *testing.T) {
			var msg string
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("RoundTrip panicked for %s: %q on a failed request: %v", header, `"`, p)
					}
				}()
				msg, _ = errorTelemetry(t, http.MethodGet, "http://"+addr+"/v1/orders", http.Header{header: {`"`}}, dialer)
			}()
			if msg != "" && !strings.Contains(msg, "connection refused") {
				t.Errorf("Error() = %q", msg)
			}
		})
	}
}

// A short credential value with a leading tab (or a leading NBSP, which
// strings.TrimSpace also trims; net/http sends both: a tab and obs-text
// are valid in a field value) is matched only trimmed, while fmt's %q and
// %#v and encoding/json print it whole and escaped ("\tk9", "\u00a0k9"
// raw): the word after the punctuation is "tk9" or "\u00a0k9", none of
// the values, the scan stops, and the value reaches Error() and the spans.
// docs/telemetry.md / CHANGELOG: a value shorter than 4 bytes is replaced
// where its header is printed with it, "as each print spells it".
func TestAShortValueWithALeadingSpaceReachesNoTelemetry(t *testing.T) {
	jsonp := func(h http.Header) string { js, _ := json.Marshal(h); return string(js) }
	for name, c := range map[string]struct {
		value string
		print func(http.Header) string
	}{
		"tab, %q":    {"\tk9", func(h http.Header) string { return fmt.Sprintf("%q", h) }},
		"tab, %#v":   {"\tk9", func(h http.Header) string { return fmt.Sprintf("%#v", h) }},
		"tab, json":  {"\tk9", jsonp},
		"nbsp, fmt":  {"\u00a0k9", func(h http.Header) string { return fmt.Sprint(h) }},
		"nbsp, json": {"\u00a0k9", jsonp},
	} {
		t.Run(name, func(t *testing.T) {
			var printed string
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1/orders", http.Header{"X-Api-Key": {c.value}},
				failingWith(func(r *http.Request) error {
					printed = c.print(r.Header)
					return fmt.Errorf("upstream rejected headers %s", printed)
				}))
			if strings.Contains(msg, "k9") || strings.Contains(tel, "k9") {
				t.Errorf("X-Api-Key value %q reached telemetry; the base printed %q\nError() = %q", c.value, printed, msg)
			}
		})
	}
}

// scrubAfterName finds the header's name in asciiLower(msg) and uses that
// index in msg ("so that an index in it is one in s"), but strings.Map
// turned each invalid UTF-8 byte into U+FFFD, three bytes: after a server's
// binary bytes the indices drifted and the short value printed right after
// its header was not found. docs/telemetry.md / CHANGELOG: a value
// shorter than 4 bytes is replaced where its header is printed with it.
func TestAShortValueAfterInvalidUTF8ReachesNoTelemetry(t *testing.T) {
	for _, prefix := range []string{"\xff", "\xff\xfe", "body \x80\x81\x82\x83:"} {
		t.Run(fmt.Sprintf("%q", prefix), func(t *testing.T) {
			var printed string
			msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1/orders", http.Header{"X-Api-Key": {"k9z"}},
				failingWith(func(r *http.Request) error {
					printed = fmt.Sprint(r.Header)
					return fmt.Errorf("upstream said %s; rejected headers %s", prefix, printed)
				}))
			if strings.Contains(msg, "k9z") || strings.Contains(tel, "k9z") {
				t.Errorf("X-Api-Key value reached telemetry; the base printed %q\nError() = %q", printed, msg)
			}
		})
	}
}

// refusedAddr is an address on 127.0.0.1 nobody listens on: a dial to it
// is refused.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
