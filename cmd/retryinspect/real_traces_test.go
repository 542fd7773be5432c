// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The transport makes a call whenever time is left (row 4 of the decision
// table: "before a call, no time left" is remaining <= 0 on the monotonic
// clock). A retry started with 0.9 ms left is such a call, and it
// succeeds; the attempt records retry.remaining_ms 0 (whole milliseconds,
// truncated). retryinspect reports it as attempt-after-deadline ("an
// attempt started after the deadline or with no time left"): a false
// finding on a correct, successful operation.
func TestAnAttemptWithUnderAMillisecondLeftIsNotAfterTheDeadline(t *testing.T) {
	var spans bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tp := spanWriter(t, &spans)
		base := scripted.New(scripted.Step{Delay: 100 * time.Millisecond, Status: 503}, scripted.Step{Status: 200})
		c := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans(),
			otelretry.WithDeadline(100*time.Millisecond+900*time.Microsecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)))}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://inventory.test/items", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d, want the retry's 200", resp.StatusCode)
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	code, out, errOut := runOnFile(t, spans.Bytes())
	if !strings.Contains(out, "outcome return") {
		t.Fatalf("the scenario did not play:\n%s", out)
	}
	if code != exitClean || strings.Contains(out, "[attempt-after-deadline]") {
		t.Errorf("exit %d, stderr %q: a call made with 0.9ms left, which succeeded, is reported as after the deadline\n%s", code, errOut, out)
	}
}

// postOnce sends one POST through the real transport (virtual time) and
// returns its spans as the stdouttrace exporter writes them.
func postOnce(t *testing.T, base http.RoundTripper, opts ...otelretry.Option) []byte {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tp := spanWriter(t, &out)
		c := &http.Client{Transport: otelretry.NewTransport(base,
			append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans()}, opts...)...)}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://pay.test/charges", strings.NewReader(`{}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return out.Bytes()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// firstFailsThenOK fails the first call with fail, answers 200 after.
func firstFailsThenOK(fail func(*http.Request) error) http.RoundTripper {
	var n atomic.Int32
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			return nil, fail(r)
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody,
			Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	})
}

// A write the library resends only because it proved the first call
// unsent or the service said it may be repeated (decision table rows 18,
// 23 and 24, docs/decisions.md; the proof recorded as retry.reason
// not_processed / server_retry and retry.evidence.*) is correct behavior:
// retryinspect must not report it as an unsafe-resend ("a write resent
// after an ambiguous result").
func TestAWriteResentOnARecordedProofIsNotUnsafe(t *testing.T) {
	cases := map[string][]byte{
		// Row 26: "a cut before the base reported a connection": the
		// dial hangs past the attempt timeout.
		"dial-cut-before-connection": postOnce(t, firstFailsThenOK(func(r *http.Request) error {
			httptrace.ContextClientTrace(r.Context()).GetConn(r.URL.Host)
			<-r.Context().Done()
			return &net.OpError{Op: "dial", Net: "tcp", Err: r.Context().Err()}
		}), otelretry.WithAttemptTimeout(100*time.Millisecond)),
		// Row 26: "a failed first write on a reused HTTP/1 connection":
		// a TLS connection whose own ALPN said HTTP/1 (no handshake is
		// needed to read it), as otelretry knows one over a base of its own.
		"reused-conn-first-write-failed": postOnce(t, firstFailsThenOK(func(r *http.Request) error {
			tr := httptrace.ContextClientTrace(r.Context())
			tr.GetConn(r.URL.Host)
			tr.GotConn(httptrace.GotConnInfo{Conn: tls.Client(&net.TCPConn{}, &tls.Config{}), Reused: true, WasIdle: true})
			err := &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
			tr.WroteRequest(httptrace.WroteRequestInfo{Err: err})
			return err
		})),
		// Row 18: a Classifier asks for a retry of every transport error;
		// it never makes a write repeatable, so the POST is resent on the
		// proof of row 26 (recorded with reason classifier).
		"classifier-retryable-over-a-proof": postOnce(t, firstFailsThenOK(func(r *http.Request) error {
			httptrace.ContextClientTrace(r.Context()).GetConn(r.URL.Host)
			<-r.Context().Done()
			return &net.OpError{Op: "dial", Net: "tcp", Err: r.Context().Err()}
		}), otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Err != nil {
					return otelretry.Retryable(0)
				}
				return otelretry.Classification{}
			})),
		// Row 23: a 503 with Stripe-Should-Retry: true under
		// WithShouldRetryWrites, "recorded as evidence".
		"should-retry-true": postOnce(t, scripted.New(
			scripted.Step{Delay: time.Millisecond, Status: 503, Header: http.Header{"Stripe-Should-Retry": {"true"}}},
			scripted.Step{Delay: time.Millisecond, Status: 200}),
			otelretry.WithShouldRetryHeaders("Stripe-Should-Retry"), otelretry.WithShouldRetryWrites()),
	}
	for name, spans := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runOnFile(t, spans)
			if !strings.Contains(out, "retry     not_processed") && !strings.Contains(out, "retry     server_retry") && !strings.Contains(out, "retry     classifier") {
				t.Fatalf("the scenario did not play (no not_processed, server_retry or classifier retry):\n%s", out)
			}
			if code != exitClean || strings.Contains(out, "[unsafe-resend]") {
				t.Errorf("exit %d, stderr %q: a write the library proved safe to resend is reported\n%s", code, errOut, out)
			}
		})
	}
}
