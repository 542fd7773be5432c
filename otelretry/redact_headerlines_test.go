// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// rawH1Server answers every request on 127.0.0.1 with the raw bytes of
// answer, and counts the requests it read.
func rawH1Server(t *testing.T, answer string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					n.Add(1)
					if _, err := c.Write([]byte(answer)); err != nil {
						return
					}
				}
			}(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + "/v1/items", &n
}

// A response header line whose value holds a byte net/http rejects (DEL),
// a malformed hint's or a cookie's, is quoted whole in net/http's error: its
// value must reach no span, log record or error
// (docs/telemetry.md: "otelretry records no header's value, on any
// channel", with one exception, User-Agent on otelhttp's span).
func TestAMalformedHeaderLinesValueReachesNoTelemetry(t *testing.T) {
	for _, line := range []string{"Retry-After: 5 ", "Retry-After-Ms: 5", "Set-Cookie: session="} {
		t.Run(strings.TrimSpace(line), func(t *testing.T) { malformedHeaderLeak(t, line) })
	}
}

func malformedHeaderLeak(t *testing.T, line string) {
	const secret = "HINTSECRETVALUE42"
	url, _ := rawH1Server(t, "HTTP/1.1 503 Service Unavailable\r\n"+line+secret+"\x7f\r\nContent-Length: 0\r\n\r\n")

	rec := tracetest.NewSpanRecorder()
	lrec := &logRecorder{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(lrec))
	t.Cleanup(func() { lp.Shutdown(t.Context()) })
	var logs bytes.Buffer
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithLoggerProvider(lp),
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		otelretry.WithMaxAttempts(2),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithDeadline(5*time.Second))}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d; want net/http's error for the malformed header", resp.StatusCode)
	}
	var dump strings.Builder
	for _, s := range rec.Ended() {
		fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Status(), s.Events())
		if strings.Contains(s.Status().Description, secret) {
			t.Logf("span %q (kind %v) status description: %q", s.Name(), s.SpanKind(), s.Status().Description)
		}
	}
	var eventDump strings.Builder
	for _, r := range lrec.records {
		fmt.Fprintf(&eventDump, "%s %v %v\n", r.EventName(), r.Body().Emit(), recordAttrs(r))
	}
	var rerr *otelretry.Error
	errText := err.Error()
	if errors.As(err, &rerr) {
		errText = rerr.Error()
	}
	for _, where := range []struct{ name, text string }{
		{"spans", dump.String()}, {"slog", logs.String()}, {"log events", eventDump.String()}, {"error", errText},
	} {
		if strings.Contains(where.text, secret) {
			i := strings.Index(where.text, secret)
			t.Errorf("%s carry the malformed header line's value: ...%s...", where.name, where.text[max(0, i-80):min(len(where.text), i+40)])
		}
	}
}

// A response header line net/textproto rejects because its name is no
// token (a Set-Cookie line missing the colon after its name) is quoted
// whole in net/http's error. scrubHeaderLines kept the text up to the
// line's first ':' as its "name": when that colon was one of the value's
// (a cookie's Expires time, "07:28:00"), the cookie's value stayed in the
// CLIENT span's status and in Error.Error().
// CHANGELOG: "the quoted line keeps its name only";
// docs/telemetry.md: "otelretry records no header's value, on any channel".
func TestAMalformedHeaderLineWithoutItsColonKeepsNoValue(t *testing.T) {
	const secret = "SESSIONSECRET42"
	for _, line := range []string{
		"Set-Cookie session=" + secret + "; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
		"Set-Cookie session=" + secret + "; Path=/; Domain=h.test:8443",
	} {
		t.Run(line[:20], func(t *testing.T) {
			headValueLeaks(t, "HTTP/1.1 503 Service Unavailable\r\n"+line+"\r\nContent-Length: 0\r\n\r\n", secret)
		})
	}
}

// net/http quotes the values of framing headers it rejects
// ("unsupported transfer encoding: %q", "too many transfer encodings: %q",
// "bad Content-Length %q", "multiple Content-Length headers; got %q").
// docs/telemetry.md: "otelretry records no header's value, on any
// channel" (one exception: User-Agent on otelhttp's span).
func TestFramingHeaderValuesReachNoTelemetry(t *testing.T) {
	const secret = "FRAMINGSECRET42"
	for name, answer := range map[string]string{
		// a response that begins with its header lines, its status line
		// missing (an nph CGI script's output): net/http quotes the first
		// line as the status line ("malformed HTTP status code %q",
		// "malformed HTTP response %q")
		"no status line, SP": "Set-Cookie: session=" + secret + "\r\nContent-Length: 0\r\n\r\n",
		"no status line":     "Set-Cookie:session=" + secret + "\r\nContent-Length: 0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) { headValueLeaks(t, answer, secret) })
	}
	for name, head := range map[string]string{
		"unsupported TE": "Transfer-Encoding: " + secret + "\r\n",
		"too many TE":    "Transfer-Encoding: chunked\r\nTransfer-Encoding: " + secret + "\r\n",
		"bad CL":         "Content-Length: " + secret + "\r\n",
		"multiple CL":    "Content-Length: 0\r\nContent-Length: " + secret + "\r\n",
	} {
		t.Run(name, func(t *testing.T) { headValueLeaks(t, "HTTP/1.1 503 Service Unavailable\r\n"+head+"\r\n", secret) })
	}
}

// headValueLeaks sends one GET to a server answering the raw bytes of
// answer, which net/http rejects, and fails t where secret, a value of
// the response's head, reaches the caller's error or a span.
func headValueLeaks(t *testing.T, answer, secret string) {
	t.Helper()
	url, _ := rawH1Server(t, answer)
	headValueLeaksAt(t, url, http.DefaultTransport.(*http.Transport).Clone(), secret)
}

// headValueLeaksAt is headValueLeaks for a server at url reached through
// base.
func headValueLeaksAt(t *testing.T, url string, base *http.Transport, secret string) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithMaxAttempts(1),
		otelretry.WithDeadline(5*time.Second))}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d; want net/http's error for the response's head", resp.StatusCode)
	}
	var rerr *otelretry.Error
	text := err.Error()
	if errors.As(err, &rerr) {
		text = rerr.Error()
	}
	if strings.Contains(text, secret) {
		t.Errorf("Error() carries the header's value: %s", text)
	}
	for _, s := range rec.Ended() {
		dump := fmt.Sprintf("%v %v %v", s.Status().Description, s.Attributes(), s.Events())
		if strings.Contains(dump, secret) {
			t.Errorf("span %q carries the header's value: %s", s.Name(), s.Status().Description)
		}
	}
}

// A framing header's value (Transfer-Encoding) is server-written text:
// when it holds the text of an earlier entry of quotedResponseText
// followed by a rune literal or a raw string (which %q leaves
// unescaped): scrubHeaderLines replaced that inner "quote" first with a
// double-quoted "REDACTED", which ended the outer quoted value early, the
// outer replacement covered only its head and the rest of the value
// stayed in the text. One pass, left to right, reads no value twice.
func TestANestedQuotedPrefixLeavesNoValue(t *testing.T) {
	const secret = "FRAMINGSECRET42"
	for name, head := range map[string]string{
		"rune literal": "Transfer-Encoding: malformed MIME header line: 'x' " + secret + "\r\n",
		"raw string":   "Transfer-Encoding: malformed MIME header line: `x` " + secret + "\r\n",
		"bad CL":       "Content-Length: invalid empty Content-Length 'x' " + secret + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			headValueLeaks(t, "HTTP/1.1 503 Service Unavailable\r\n"+head+"\r\n", secret)
		})
	}
}

// Over HTTP/2, net/http quotes a field name that is no token (which may
// hold a value), an unknown pseudo-header and a GOAWAY's debug data,
// whole: each server-written text is replaced, as a malformed HTTP/1 line
// is.
func TestHTTP2ServerTextReachesNoTelemetry(t *testing.T) {
	for name, action := range map[string]h2Action{"a field name": h2BadFieldName, "a pseudo-header": h2BadPseudo,
		"a pseudo-header with a bad value": h2BadPseudoValue, "a GOAWAY's debug data": h2GoAwayDebug} {
		t.Run(name, func(t *testing.T) {
			headValueLeaksAt(t, newH2Server(t, action).url(), h2cTransport(), h2Secret)
		})
	}
}

// quic-go v0.65.0 http3/headers.go forms that print what a server wrote,
// built with quic-go's own format strings. A server other than quic-go's
// (which lowercases names) may send any bytes as a QPACK field name.
func TestQuicGoHeaderFormsReachNoTelemetry(t *testing.T) {
	const secret = "SUPERSECRETSESSION0123456789"
	for _, tc := range []struct {
		name string
		err  error
	}{
		// validateHeaderFieldNameAndValue: fmt.Errorf("header field is not lower-case: %s", h.Name)
		{"not lower-case name holding a line", fmt.Errorf("header field is not lower-case: %s", "Set-Cookie: sid="+secret)},
		// fmt.Errorf("invalid header field value for %s: %q", h.Name, h.Value), name not a token
		{"value for a non-token name", fmt.Errorf("invalid header field value for %s: %q", "x-session id", "sid="+secret+"\x01")},
		{"value for a pseudo name", fmt.Errorf("invalid header field value for %s: %q", ":x-session", "sid="+secret+"\x01")},
		// parseHeaders: fmt.Errorf("contradicting content lengths (%s and %s)", contentLengthStr, h.Value)
		{"contradicting content lengths", fmt.Errorf("contradicting content lengths (%s and %s)", "1", secret)},
		// parseHeaders: fmt.Errorf("invalid content length: %w", strconv.ParseUint error)
		{"invalid content length", fmt.Errorf("invalid content length: %w", errors.New(`strconv.ParseUint: parsing "`+secret+`": invalid syntax`))},
		// the value is checked before the name: a name that holds `: "` is
		// printed as it is, then the value quoted
		{"name holds colon-quote, value secret", fmt.Errorf("invalid header field value for %s: %q", `x: "a"`, "sid="+secret+"\x01")},
		{"name holds colon-quote and secret", fmt.Errorf("invalid header field value for %s: %q", `x: "a" sid=`+secret, "\x01")},
		{"name opens a quote", fmt.Errorf("invalid header field value for %s: %q", `x: "a`, "sid="+secret+"\x01")},
		// fmt.Errorf("invalid header field name: %q", h.Name), a name that is no token
		{"invalid name", fmt.Errorf("invalid header field name: %q", "retry-after/sid="+secret)},
		// parseStatus: fmt.Errorf("invalid status code: %w", strconv.Atoi error)
		{":status no number", fmt.Errorf("invalid status code: %w", errors.New(`strconv.Atoi: parsing "sid=`+secret+`": invalid syntax`))},
		// A peer's reason phrase: http3.Error (remote unless "(local)"),
		// quic's ApplicationError and TransportError.
		{"H3 reason phrase", fmt.Errorf("parsing frame failed: %s", "H3_INTERNAL_ERROR: session sid="+secret+" expired")},
		{"H3 unknown code reason phrase", errors.New("H3 error (0x1337): sid=" + secret)},
		{"QPACK reason phrase", errors.New("QPACK_DECOMPRESSION_FAILED: sid=" + secret)},
		{"QUIC application close", errors.New("Application error 0x100 (remote): sid=" + secret)},
		{"QUIC transport close", errors.New("PROTOCOL_VIOLATION (remote): sid=" + secret)},
		{"QUIC transport close with a frame", errors.New("FRAME_ENCODING_ERROR (remote) (frame type: 0x1c): sid=" + secret)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("http3: invalid response: %w", tc.err)
			})
			client := &http.Client{Transport: otelretry.NewTransport(base,
				otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithMaxAttempts(1), otelretry.WithDeadline(2*time.Second))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
			_, err := client.Do(req)
			if err == nil {
				t.Fatal("want the base's error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error keeps the value: %s", err)
			}
			for _, s := range rec.Ended() {
				if strings.Contains(s.Status().Description, secret) {
					t.Errorf("span %q status: %s", s.Name(), s.Status().Description)
				}
				for _, a := range s.Attributes() {
					if strings.Contains(a.Value.Emit(), secret) {
						t.Errorf("span %q %s = %s", s.Name(), a.Key, a.Value.Emit())
					}
				}
			}
		})
	}
}
