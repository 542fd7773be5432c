// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/otelretry"
)

// countingServer is a 127.0.0.1 server under otelhttp's handler that counts
// the requests it sees.
type countingServer struct {
	mu   sync.Mutex
	seen int
	srv  *httptest.Server
}

func newCountingServer(t *testing.T, tp trace.TracerProvider, h func(n int, w http.ResponseWriter, r *http.Request)) *countingServer {
	s := &countingServer{}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.seen++
		n := s.seen
		s.mu.Unlock()
		h(n, w, r)
	})
	s.srv = httptest.NewServer(otelhttp.NewHandler(inner, "server", otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{})))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *countingServer) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.seen }

// hijackClose closes the connection of a request read whole, unanswered.
func hijackClose(w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		c.Close()
	}
}

type instrumentedBaseCase struct {
	name string
	// handler answers the server's nth request; send sends through a
	// client stack made with mk, under ctx.
	handler func(n int, w http.ResponseWriter, r *http.Request)
	send    func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string)
	// stacked: two otelretry layers, each over otelhttp.
	stacked bool
	// findings: the codes expected, each with its count.
	findings map[inspect.Code]int
	ops      int // operations expected (of the innermost layer and above)
}

// sendOnce sends one request through c and reads the answer, if any.
func sendOnce(t *testing.T, c *http.Client, ctx context.Context, method, url string, body string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, rd)
	resp, err := c.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// Traces of otelretry over an instrumented base, its attempt spans
// otelretry's INTERNAL ones with the base's otelhttp CLIENT spans under
// them (over otelhttp's Transport, taken as instrumented, and under
// WithoutClientSpans), read as the server saw them: the CLIENT spans
// never taken for attempts or for an outer layer's resend, no finding or
// missing-attribute note but where docs/retryinspect.md says, the
// attempts equal to the server's requests (a reviewer's run, after the
// Transport began to take otelhttp's as instrumented).
func TestTracesOverAnInstrumentedBaseReadAsTheServerSawThem(t *testing.T) {
	noBackoff := otelretry.WithBackoff(otelretry.ConstantBackoff(0))
	cases := []instrumentedBaseCase{
		{name: "get-503-then-200", ops: 1,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.WriteHeader(503)
				}
			},
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "GET", url+"/items", "")
			}},
		{name: "post-cut-no-check", ops: 1,
			handler: func(n int, w http.ResponseWriter, r *http.Request) { hijackClose(w) },
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "POST", url+"/charges", `{"a":1}`)
			}},
		{name: "post-cut-check-not-applied", ops: 1,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					hijackClose(w)
				}
			},
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff, otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					return otelretry.StateResult{State: attrs.StateNotApplied}, nil
				})), ctx, "POST", url+"/charges", `{"a":1}`)
			}},
		{name: "hedged-race", ops: 1,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
				}
			},
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1})), ctx, "GET", url+"/slow", "")
			}},
		{name: "redirect-chain", ops: 3,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/a":
					http.Redirect(w, r, "/b", http.StatusFound)
				case "/b":
					http.Redirect(w, r, "/c", http.StatusFound)
				}
			},
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "GET", url+"/a", "")
			}},
		{name: "two-writes-one-handler", ops: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) },
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				c := mk(noBackoff)
				sendOnce(t, c, ctx, "POST", url+"/orders", `{"o":1}`)
				sendOnce(t, c, ctx, "POST", url+"/payments", `{"p":1}`)
			}},
		{name: "stacked-get-503-then-200", stacked: true, ops: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.WriteHeader(503)
				}
			},
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "GET", url+"/items", "")
			}},
		{name: "stacked-post-503", stacked: true, ops: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) },
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "POST", url+"/charges", `{"a":1}`)
			}},
		{name: "stacked-post-cut", stacked: true, ops: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) { hijackClose(w) },
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				sendOnce(t, mk(noBackoff), ctx, "POST", url+"/charges", `{"a":1}`)
			}},
		{name: "app-loop-resends-write", ops: 3, findings: map[inspect.Code]int{inspect.CodeOuterLayerResend: 2},
			handler: func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) },
			send: func(t *testing.T, mk func(...otelretry.Option) *http.Client, ctx context.Context, url string) {
				c := mk(noBackoff)
				for range 3 {
					sendOnce(t, c, ctx, "POST", url+"/charges", `{"a":1}`)
				}
			}},
	}
	for _, mode := range []string{"otelhttp-base", "without-client-spans"} {
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				var spans bytes.Buffer
				tp := spanWriter(t, &spans)
				srv := newCountingServer(t, tp, tc.handler)
				base := func() http.RoundTripper {
					return &http.Transport{DisableKeepAlives: true}
				}
				layer := func(inner http.RoundTripper, opts ...otelretry.Option) http.RoundTripper {
					all := append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithoutBudget(),
						otelretry.WithPropagators(propagation.TraceContext{})}, opts...)
					if mode == "without-client-spans" {
						all = append(all, otelretry.WithoutClientSpans())
					}
					return otelretry.NewTransport(otelhttp.NewTransport(inner, otelhttp.WithTracerProvider(tp),
						otelhttp.WithPropagators(propagation.TraceContext{})), all...)
				}
				mk := func(opts ...otelretry.Option) *http.Client {
					rt := layer(base(), opts...)
					if tc.stacked {
						rt = layer(rt, opts...)
					}
					return &http.Client{Transport: rt}
				}
				ctx, handler := tp.Tracer("app").Start(context.Background(), "handler", trace.WithSpanKind(trace.SpanKindServer))
				tc.send(t, mk, ctx, srv.srv.URL)
				handler.End()
				srv.srv.Close()
				if err := tp.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
				checkReadAsSeen(t, spans.Bytes(), srv.count(), tc)
			})
		}
	}
}

// checkReadAsSeen checks retryinspect's reading of spans against tc and
// the server's count of requests, seen.
func checkReadAsSeen(t *testing.T, spans []byte, seen int, tc instrumentedBaseCase) {
	t.Helper()
	r := analyzeWith(t, spans, read.Stdout)
	got := map[inspect.Code]int{}
	for _, f := range r.Findings {
		got[f.Code]++
	}
	var msgs []string
	codes := maps.Clone(got)
	maps.Copy(codes, tc.findings)
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		if got[c] != tc.findings[c] {
			msgs = append(msgs, fmt.Sprintf("finding %s: %d, want %d", c, got[c], tc.findings[c]))
		}
	}
	for _, n := range r.Notes {
		if strings.Contains(string(n.Code), "missing") {
			msgs = append(msgs, fmt.Sprintf("note %s x%d: %s", n.Code, n.Count, n.Seen))
		}
	}
	if len(r.Operations) != tc.ops {
		msgs = append(msgs, fmt.Sprintf("%d operations, want %d", len(r.Operations), tc.ops))
	}
	if !tc.stacked { // one layer: its attempts are what the server saw
		attempts, depAttempts := 0, 0
		for _, op := range r.Operations {
			attempts += len(op.Attempts)
		}
		for _, d := range r.Dependencies {
			depAttempts += d.Attempts
		}
		if attempts != seen || depAttempts != seen {
			msgs = append(msgs, fmt.Sprintf("%d attempts read (%d by dependency), the server saw %d requests", attempts, depAttempts, seen))
		}
	}
	if len(msgs) > 0 {
		code, out, _ := runOnFile(t, spans)
		t.Errorf("server saw %d requests, span counts %+v:\n%s\n--- exit %d\n%s", seen, r.Spans, strings.Join(msgs, "\n"), code, out)
	}
}
