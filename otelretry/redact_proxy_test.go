// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/silentport"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestProxyReasonPhraseIsNotRecorded: net/http returns a proxy's refusal
// of a CONNECT as the proxy's reason phrase alone, text a server wrote.
// A proxy that repeats the Proxy-Authorization net/http built from the
// proxy URL's password had it recorded on the attempt's span and in the
// caller's error. A phrase of its own is replaced; a standard one, which
// tells only the status, is kept. The user's Proxy is not asked again (a
// rotation would have moved on, and could answer otherwise): once an
// attempt, by net/http.
func TestProxyReasonPhraseIsNotRecorded(t *testing.T) {
	for _, tc := range []struct{ name, phrase, want string }{
		{"echoed credentials", "credentials rejected: %s", "no connection: REDACTED"},
		{"standard phrase", "Proxy Authentication Required", "Proxy Authentication Required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := refusingProxy(t, tc.phrase)
			rec, opts := tracingProviders()
			proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: proxy}
			var asked atomic.Int32
			base := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) {
				asked.Add(1)
				return proxyURL, nil
			}}
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base,
				append(opts, otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))...)}
			_, err := client.Get("https://api.test/x")
			if err == nil {
				t.Fatal("no error")
			}
			secret := "cHVzZXI6UFJPWFlQQVNTMDc=" // base64 of puser:PROXYPASS07
			if recorded := recordedText(err, rec.Ended(), ""); strings.Contains(recorded, secret) {
				t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if n := asked.Load(); n != 2 {
				t.Errorf("Proxy asked %d times for 2 attempts", n)
			}
		})
	}
}

// TestAProxyPhraseThroughALayerIsNotRecorded: below a layer that wraps
// net/http's Transport (a user's wrapper that passes its error on or wraps
// it, otelhttp's under WithoutClientSpans), the proxy's phrase repeating
// the Proxy-Authorization it got was recorded on otelretry's attempt span
// and in the caller's error: it was replaced only with net/http's
// Transport as the base. It is replaced below such a layer too (otelhttp's
// own CLIENT span records the base's error as otelhttp alone does).
func TestAProxyPhraseThroughALayerIsNotRecorded(t *testing.T) {
	proxy := refusingProxy(t, "credentials rejected: %s")
	proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: proxy}
	ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer ht.CloseIdleConnections()
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc=" // base64 of puser:PROXYPASS07
	for _, tc := range []struct {
		name   string
		base   http.RoundTripper
		option otelretry.Option
	}{
		{"passes it on", roundTripFunc(ht.RoundTrip), nil},
		{"wraps it", roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := ht.RoundTrip(r)
			if err != nil {
				err = fmt.Errorf("auth layer: %w", err)
			}
			return resp, err
		}), nil},
		{"otelhttp", otelhttp.NewTransport(ht), otelretry.WithoutClientSpans()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, opts := tracingProviders()
			opts = append(opts, tc.option, otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
			_, err := otelretry.NewTransport(tc.base, opts...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			ownSpans := "" // otelhttp's CLIENT span is the attempt's, but for the base's own under WithoutClientSpans
			if tc.option != nil {
				ownSpans = otelhttp.ScopeName
			}
			if recorded := recordedText(err, rec.Ended(), ownSpans); strings.Contains(recorded, secret) {
				t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
			}
			if !strings.Contains(err.Error(), "no connection: REDACTED") {
				t.Errorf("error %q does not say %q", err, "no connection: REDACTED")
			}
		})
	}
}

// refusingProxy listens on 127.0.0.1 and answers every CONNECT 407 with
// phrase, in which %s, if any, is the Proxy-Authorization it got.
func refusingProxy(t *testing.T, phrase string) string {
	return gatedRefusingProxy(t, phrase, nil, nil)
}

// gatedRefusingProxy is refusingProxy that, given got and release, tells
// got of each CONNECT it read (when got has room) and answers it once
// release is closed.
func gatedRefusingProxy(t *testing.T, phrase string, got chan<- struct{}, release <-chan struct{}) string {
	return serveConns(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		if got != nil {
			select {
			case got <- struct{}{}:
			default:
			}
		}
		if release != nil {
			<-release
		}
		text := phrase
		if strings.Contains(phrase, "%s") {
			text = fmt.Sprintf(phrase, req.Header.Get("Proxy-Authorization"))
		}
		fmt.Fprintf(c, "HTTP/1.1 407 %s\r\nContent-Length: 0\r\n\r\n", text)
	})
}

// A proxy's phrase that is net/http's own message for an HTTP/2 GOAWAY
// proves nothing of the kind: the attempt gets neither the class
// refused_stream nor the GOAWAY evidence (it got both, for a GET and for
// a POST, though no HTTP/2 connection was ever made).
func TestAProxyPhraseIsNoHTTP2Proof(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			proxy := refusingProxy(t, "http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM")
			rec, opts := tracingProviders()
			base := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}
			defer base.CloseIdleConnections()
			rt := otelretry.NewTransport(base, append(opts, otelretry.WithMaxAttempts(1))...)
			req, _ := http.NewRequest(method, "https://api.test/orders", strings.NewReader("order"))
			if _, err := rt.RoundTrip(req); err == nil {
				t.Fatal("no error")
			}
			for _, a := range spantest.Attempts(rec.Ended()) {
				if class, ev := attrOf(a, attrs.ErrorClassKey).AsString(), attrOf(a, attrs.EvidenceNameKey).AsString(); class == string(attrs.ErrorClassRefusedStream) || ev != "" {
					t.Errorf("attempt recorded class %s, evidence %q", class, ev)
				}
			}
		})
	}
}

// dialCancelOutcome is what a caller and the telemetry get of one attempt.
type dialCancelOutcome struct {
	text, status, decision, class, reason string
	isCanceled                            bool
}

func (o dialCancelOutcome) String() string {
	return "text=" + o.text + " | status=" + o.status + " | decision=" + o.decision + " class=" + o.class + " reason=" + o.reason
}

// opText is an operation error's text without its operation id.
func opText(err error) string {
	s := err.Error()
	if _, after, ok := strings.Cut(s, " attempt: "); ok {
		return after
	}
	if _, after, ok := strings.Cut(s, " attempts: "); ok {
		return after
	}
	return s
}

// cancelWhileDialing sends an https GET through base to a silent port,
// which never answers the TLS handshake, and cancels the caller's context
// with cause (nil: a plain cancel) once the TCP connection is made:
// net/http is waiting for its connection (GetConn, no GotConn).
func cancelWhileDialing(t *testing.T, base http.RoundTripper, addr string, cause error) dialCancelOutcome {
	rec, opts := tracingProviders()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{ConnectDone: func(string, string, error) { cancel(cause) }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/x", nil)
	_, err := otelretry.NewTransport(base, append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(time.Minute))...).RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	o := dialCancelOutcome{text: opText(err), isCanceled: errors.Is(err, context.Canceled)}
	as := spantest.Attempts(rec.Ended())
	if len(as) != 1 {
		t.Fatalf("%d attempt spans", len(as))
	}
	a := as[0]
	o.status = a.Status().Description
	o.decision = attrOf(a, attrs.DecisionKey).Emit()
	o.class = attrOf(a, attrs.ErrorClassKey).Emit()
	o.reason = attrOf(a, attrs.ReasonKey).Emit()
	return o
}

// TestACallersCancelWhileDialingIsNoProxyPhrase: a caller that cancels
// while net/http waits for an https connection gets the same error, and
// the attempt span the same status, whether net/http's proxy-less
// Transport is the base, a layer that passes its error on wraps it, or
// the Transport has http.DefaultTransport's Proxy: otelretry's own error,
// which wraps the caller's context.Canceled (an errors.New), is no
// proxy's phrase (it read "no connection: REDACTED" under the last two),
// nor is the cause the caller canceled with (an errors.New), which
// net/http returns as its error beside otelretry's own.
func TestACallersCancelWhileDialingIsNoProxyPhrase(t *testing.T) {
	addr := silentport.Listen(t)
	ht := &http.Transport{}
	defer ht.CloseIdleConnections()
	// http.DefaultTransport's Proxy: it proxies nothing on 127.0.0.1.
	envProxy := &http.Transport{Proxy: http.ProxyFromEnvironment}
	defer envProxy.CloseIdleConnections()
	for _, cause := range []error{nil, errors.New("client shutting down")} {
		bare := cancelWhileDialing(t, ht, addr, cause)
		for _, tc := range []struct {
			name string
			base http.RoundTripper
		}{
			{"wrapped", roundTripFunc(ht.RoundTrip)},
			{"ProxyFromEnvironment", envProxy},
		} {
			t.Run(fmt.Sprintf("%s, cause %v", tc.name, cause), func(t *testing.T) {
				got := cancelWhileDialing(t, tc.base, addr, cause)
				if !got.isCanceled {
					t.Errorf("errors.Is(err, context.Canceled) = false")
				}
				if got != bare {
					t.Errorf("the caller's cancel reads otherwise than with the bare Transport:\nbare: %v\ngot:  %v", bare, got)
				}
			})
		}
	}
}

// TestAProxyPhraseBesideACutIsNotRecorded: a base other than a proxy-less
// *http.Transport returns an https request's errors.New after GetConn and
// before GotConn, which is taken for a proxy's phrase and replaced. When
// the attempt timeout fired as the phrase came back (net/http's getConn
// selects between the dial's result and the context's end), the cut's
// cause stands beside the phrase in the attempt's error, which holds both
// (Unwrap() []error): the phrase was recorded whole.
func TestAProxyPhraseBesideACutIsNotRecorded(t *testing.T) {
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc="
	for _, tc := range []struct {
		name     string
		waitsCut bool
	}{
		{"no cut", false},
		{"attempt timeout fired as the phrase came", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, opts := tracingProviders()
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.GetConn != nil {
						tr.GetConn(r.URL.Host + ":443")
					}
					if tc.waitsCut {
						<-r.Context().Done() // the refusal came as the attempt timeout fired
					}
					return nil, errors.New("credentials rejected: " + secret)
				})
				opts = append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(10*time.Second),
					otelretry.WithAttemptTimeout(time.Second))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
				resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if err == nil {
					t.Fatal("no error")
				}
				if recorded := recordedText(err, rec.Ended(), ""); strings.Contains(recorded, secret) {
					t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
				}
			})
		})
	}
}

// TestAProxyPhraseJoinedByALayerIsNotRecorded: a proxy's phrase a layer
// joined to an error of its own (errors.Join, or fmt.Errorf with two %w)
// was recorded whole; one it wrapped alone was replaced.
func TestAProxyPhraseJoinedByALayerIsNotRecorded(t *testing.T) {
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc="
	errLayer := errors.New("auth layer: upstream refused")
	for _, tc := range []struct {
		name string
		wrap func(error) error
	}{
		{"one %w", func(err error) error { return fmt.Errorf("auth layer: %w", err) }},
		{"errors.Join", func(err error) error { return errors.Join(errLayer, err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, opts := tracingProviders()
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.GetConn != nil {
					tr.GetConn(r.URL.Host + ":443")
				}
				return nil, tc.wrap(errors.New("credentials rejected: " + secret))
			})
			opts = append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(10*time.Second))
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
			_, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			if recorded := recordedText(err, rec.Ended(), ""); strings.Contains(recorded, secret) {
				t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
			}
		})
	}
}

// oldVersionTLSServer listens on 127.0.0.1 and answers every ClientHello
// with a ServerHello that selects SSL 3.0: crypto/tls's client fails the
// handshake with its own fmt.Errorf (an *errors.errorString) "tls: server
// selected unsupported protocol version 300", after GetConn and before
// GotConn.
func oldVersionTLSServer(t *testing.T) string {
	return serveConns(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		if _, err := c.Read(buf); err != nil {
			return
		}
		body := []byte{0x03, 0x00} // legacy_version SSL 3.0
		body = append(body, make([]byte, 32)...)
		body = append(body, 0x00, 0x00, 0x2f, 0x00) // no session id, TLS_RSA_WITH_AES_128_CBC_SHA, no compression
		hs := append([]byte{0x02, 0x00, 0x00, byte(len(body))}, body...)
		rec := append([]byte{0x16, 0x03, 0x03, 0x00, byte(len(hs))}, hs...)
		c.Write(rec)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c)
	})
}

// failOnce sends one https GET through base with one attempt and returns
// the operation error's text (without its operation id).
func failOnce(t *testing.T, base http.RoundTripper, req *http.Request) string {
	t.Helper()
	_, err := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(time.Minute)).RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	return opText(err)
}

// TestATLSHandshakeErrorIsNoProxyPhrase: a TLS handshake failure
// crypto/tls reports with its own text (an errors.New of fmt's) reads the
// same with net/http's proxy-less Transport as the base, below a layer
// that passes its error on, and with http.DefaultTransport's Proxy (which
// proxies nothing on 127.0.0.1): a CONNECT is refused before the
// handshake with the host. It read "no connection: REDACTED" under the
// last two.
func TestATLSHandshakeErrorIsNoProxyPhrase(t *testing.T) {
	addr := oldVersionTLSServer(t)
	ht := &http.Transport{}
	defer ht.CloseIdleConnections()
	envProxy := &http.Transport{Proxy: http.ProxyFromEnvironment}
	defer envProxy.CloseIdleConnections()
	req := func() *http.Request {
		r, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/x", nil)
		return r
	}
	bare := failOnce(t, ht, req())
	if !strings.Contains(bare, "unsupported protocol version") {
		t.Fatalf("bare Transport: %q; want crypto/tls's version error", bare)
	}
	for name, base := range map[string]http.RoundTripper{"wrapped": roundTripFunc(ht.RoundTrip), "ProxyFromEnvironment": envProxy} {
		if got := failOnce(t, base, req()); got != bare {
			t.Errorf("%s: the TLS error reads otherwise than with the bare Transport:\nbare: %s\ngot:  %s", name, bare, got)
		}
	}
}

// TestALegacyCancelWhileDialingIsNoProxyPhrase: the legacy
// Request.Cancel (http.Client's Timeout closes it over a RoundTripper that
// is not *http.Transport), closed while net/http waits for an https
// connection: net/http returns a text of its own for it (an errors.New),
// the caller's cancel, which reads the same whatever wraps the proxy-less
// Transport (it read "no connection: REDACTED" under a layer and under
// http.DefaultTransport's Proxy).
func TestALegacyCancelWhileDialingIsNoProxyPhrase(t *testing.T) {
	addr := silentport.Listen(t)
	ht := &http.Transport{}
	defer ht.CloseIdleConnections()
	envProxy := &http.Transport{Proxy: http.ProxyFromEnvironment}
	defer envProxy.CloseIdleConnections()
	run := func(base http.RoundTripper) string {
		cancel := make(chan struct{})
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{ConnectDone: func(string, string, error) { close(cancel) }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/x", nil)
		req.Cancel = cancel
		return failOnce(t, base, req)
	}
	bare := run(ht)
	for name, base := range map[string]http.RoundTripper{"wrapped": roundTripFunc(ht.RoundTrip), "ProxyFromEnvironment": envProxy} {
		if got := run(base); got != bare {
			t.Errorf("%s: the legacy cancel reads otherwise than with the bare Transport:\nbare: %s\ngot:  %s", name, bare, got)
		}
	}
}

// recordedText is what err and the spans hold as text (telemetryText),
// but the spans of the instrumentation scope skipScope ("" for none).
func recordedText(err error, spans []sdktrace.ReadOnlySpan, skipScope string) string {
	kept := slices.DeleteFunc(slices.Clone(spans), func(s sdktrace.ReadOnlySpan) bool {
		return skipScope != "" && s.InstrumentationScope().Name == skipScope
	})
	return err.Error() + "\n" + telemetryText(kept)
}

// TestAProxyPhraseALayerAlsoQuotedOrCutIsNotRecorded: a layer that wraps
// net/http's error holding a proxy's phrase and also prints a copy of its
// text, quoted (%q, a JSON string, which escape a quote, a tab or a '<'),
// cut short, or beside a phrase of its own that is a part of the proxy's:
// no search for the phrase's text finds every copy, so the whole message
// is replaced.
func TestAProxyPhraseALayerAlsoQuotedOrCutIsNotRecorded(t *testing.T) {
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc=" // base64 of puser:PROXYPASS07
	for _, tc := range []struct {
		name, phrase string
		layer        func(error) error
	}{
		{"%q, a quote in the phrase", `credentials "rejected": %s`, func(err error) error { return fmt.Errorf("proxy said %q: %w", err.Error(), err) }},
		{"%q, a tab in the phrase", "credentials rejected:\t%s", func(err error) error { return fmt.Errorf("proxy said %q: %w", err.Error(), err) }},
		{"JSON, a '<' in the phrase", "credentials rejected <%s>", func(err error) error {
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			return fmt.Errorf("%s: %w", b, err)
		}},
		{"cut short", "credentials rejected: %s", func(err error) error {
			s := err.Error()
			return fmt.Errorf("%s... (%w)", s[:len(s)-4], err)
		}},
		{"a part of it joined", "credentials rejected: %s", func(err error) error { return errors.Join(errors.New("rejected"), err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: refusingProxy(t, tc.phrase)}
			ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
			defer ht.CloseIdleConnections()
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := ht.RoundTrip(r)
				if err != nil {
					err = tc.layer(err)
				}
				return resp, err
			})
			rec, opts := tracingProviders()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
			_, err := otelretry.NewTransport(base, append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(5*time.Second))...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			if recorded := recordedText(err, rec.Ended(), ""); strings.Contains(recorded, secret[:len(secret)-4]) || strings.Contains(recorded, secret[len(secret)-12:]) {
				t.Errorf("(a part of) the proxy's phrase was recorded:\n%s", recorded)
			}
		})
	}
}

// TestAProxyPhraseAfterASideCallIsNotRecorded: a layer that makes a call
// of its own with the attempt's context (a token fetch) before it hands
// the request to net/http's Transport and its proxy: through a plain
// http.Client, that call's GotConn was heard as the request's, and
// through an otelretry client under a ClientTrace of the layer's, it was
// overheard and the hooks told nothing; either way the proxy's refusal
// echoing the Proxy-Authorization was recorded whole.
func TestAProxyPhraseAfterASideCallIsNotRecorded(t *testing.T) {
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc=" // base64 of puser:PROXYPASS07
	token := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "tok") }))
	defer token.Close()
	proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: refusingProxy(t, "credentials rejected: %s")}
	ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer ht.CloseIdleConnections()
	sideBase := &http.Transport{}
	defer sideBase.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		side http.RoundTripper // nil: no side call
	}{
		{"no side call", nil},
		{"through a plain client", sideBase},
		{"through otelretry, overheard", otelretry.NewTransport(sideBase, otelretry.WithMaxAttempts(1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotFirstResponseByte: func() {}})
				if tc.side != nil {
					sreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, token.URL, nil)
					resp, err := tc.side.RoundTrip(sreq)
					if err != nil {
						return nil, err
					}
					resp.Body.Close()
				}
				return ht.RoundTrip(r.WithContext(ctx))
			})
			spans, opts := tracingProviders()
			var res otelretry.Results
			req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &res), http.MethodGet, "https://api.test/x", nil)
			_, err := otelretry.NewTransport(layer, append(opts, otelretry.WithMaxAttempts(1))...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			recorded := recordedText(err, spans.Ended(), "")
			for _, o := range res.Operations() {
				if o.Err != nil {
					recorded += "\n" + o.Err.Error()
				}
			}
			if strings.Contains(recorded, secret) {
				t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
			}
		})
	}
}

// TestARequestsOwnErrorAfterASideCallWhoseDialFailed: a layer's call of
// its own with the attempt's context asks for a connection and gets none
// (a refused dial), then the request gets its connection and fails with
// net/http's own text (an errors.New in kind). Without the side call the
// text is kept; after it, the side call's ask, never answered, is not told
// from the request's, and the text is replaced, the safe side
// (docs/telemetry.md).
func TestARequestsOwnErrorAfterASideCallWhoseDialFailed(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("a", 4096))
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/token"
	ln.Close()

	ht := srv.Client().Transport.(*http.Transport).Clone()
	ht.MaxResponseHeaderBytes = 1024
	defer ht.CloseIdleConnections()
	sideBase := &http.Transport{}
	defer sideBase.CloseIdleConnections()
	const want = "server response headers exceeded"
	for _, tc := range []struct {
		name string
		side http.RoundTripper
	}{
		{"no side call", nil},
		{"refused side call through a plain transport", sideBase},
		{"refused side call through otelretry", otelretry.NewTransport(sideBase, otelretry.WithMaxAttempts(1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotFirstResponseByte: func() {}})
				if tc.side != nil {
					sreq, _ := http.NewRequestWithContext(ctx, http.MethodGet, closed, nil)
					if resp, err := tc.side.RoundTrip(sreq); err == nil {
						resp.Body.Close()
					}
				}
				return ht.RoundTrip(r.WithContext(ctx))
			})
			spans, opts := tracingProviders()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/x", nil)
			_, err := otelretry.NewTransport(layer, append(opts, otelretry.WithMaxAttempts(1))...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			recorded := recordedText(err, spans.Ended(), "")
			if kept := strings.Contains(recorded, want); kept != (tc.side == nil) {
				t.Errorf("the request's own error text %q kept: %v, want %v; recorded:\n%s", want, kept, tc.side == nil, recorded)
			}
		})
	}
}

const echoedProxySecret = "cHVzZXI6UFJPWFlQQVNTMDc=" // base64 of puser:PROXYPASS07

// TestAProxyPhraseBeforeALayersOwnCallIsNotRecorded: a layer that, after
// net/http's Transport failed with the proxy's refusal, reports the
// failure with a call of its own under the request's context (GetConn,
// GotConn), then returns the error: that call's GotConn was taken for the
// request's, and the phrase recorded whole.
func TestAProxyPhraseBeforeALayersOwnCallIsNotRecorded(t *testing.T) {
	report := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer report.Close()
	proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: refusingProxy(t, "credentials rejected: %s")}
	ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer ht.CloseIdleConnections()
	side := &http.Transport{}
	defer side.CloseIdleConnections()
	layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := ht.RoundTrip(r)
		if err != nil {
			sreq, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, report.URL+"/failures", nil)
			if sresp, serr := side.RoundTrip(sreq); serr == nil {
				sresp.Body.Close()
			}
		}
		return resp, err
	})
	spans, opts := tracingProviders()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
	_, err := otelretry.NewTransport(layer, append(opts, otelretry.WithMaxAttempts(1))...).RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	if recorded := recordedText(err, spans.Ended(), ""); strings.Contains(recorded, echoedProxySecret) {
		t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
	}
}

// TestAProxyPhraseBesideAConcurrentSideCallIsNotRecorded: a layer makes a
// call of its own on a goroutine under the request's context while the
// proxy is answering the CONNECT (ordered by channels): its GotConn was
// taken for the request's.
func TestAProxyPhraseBesideAConcurrentSideCallIsNotRecorded(t *testing.T) {
	side := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer side.Close()
	got, release := make(chan struct{}, 1), make(chan struct{})
	proxyURL := &url.URL{Scheme: "http", User: url.UserPassword("puser", "PROXYPASS07"), Host: gatedRefusingProxy(t, "credentials rejected: %s", got, release)}
	ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer ht.CloseIdleConnections()
	sideBase := &http.Transport{}
	defer sideBase.CloseIdleConnections()
	done := make(chan struct{})
	layer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		go func() {
			defer close(done)
			defer close(release)
			<-got
			sreq, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, side.URL+"/metrics", nil)
			if resp, err := sideBase.RoundTrip(sreq); err == nil {
				resp.Body.Close()
			}
		}()
		return ht.RoundTrip(r)
	})
	spans, opts := tracingProviders()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
	_, err := otelretry.NewTransport(layer, append(opts, otelretry.WithMaxAttempts(1))...).RoundTrip(req)
	<-done
	if err == nil {
		t.Fatal("no error")
	}
	if recorded := recordedText(err, spans.Ended(), ""); strings.Contains(recorded, echoedProxySecret) {
		t.Errorf("the proxy's phrase was recorded:\n%s", recorded)
	}
}

// serveConns listens on 127.0.0.1 and hands each connection to handle on
// a goroutine of its own, closing it after; the test's cleanup closes the
// listener. It returns the address.
func serveConns(t *testing.T, handle func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}
