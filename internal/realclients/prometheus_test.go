// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// readOnlyQueries wraps a Prometheus API client so that otelretry retries
// the read-only requests the client sends as POST (queries, series,
// labels) like GETs, and leaves every other request alone: the admin
// API's POSTs write.
type readOnlyQueries struct{ api.Client }

// prometheusReads are the paths the v1 client POSTs that only read.
var prometheusReads = []string{"/api/v1/query", "/api/v1/query_range", "/api/v1/query_exemplars",
	"/api/v1/series", "/api/v1/labels", "/api/v1/format_query"}

func (c readOnlyQueries) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	if slices.ContainsFunc(prometheusReads, func(p string) bool { return strings.HasSuffix(req.URL.Path, p) }) {
		in := otelretry.CallIntent(ctx) // the caller's, kept
		in.Repeatable = true
		ctx = otelretry.WithIntent(ctx, in)
	}
	return c.Client.Do(ctx, req)
}

// queryWithIntent is docs/decisions.md's one-query form: one query,
// marked as safe to repeat.
func queryWithIntent(ctx context.Context, promAPI v1.API) (model.Value, error) {
	// Prometheus's queries only read, but the client sends them as POST:
	// say so, and otelretry retries this one like a GET.
	ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
	result, _, _, err := promAPI.Query(ctx, "vector(1)", time.Now())
	return result, err
}

// query is the same query without an intent.
func query(ctx context.Context, promAPI v1.API) (model.Value, error) {
	result, _, _, err := promAPI.Query(ctx, "vector(1)", time.Now())
	return result, err
}

// TestPrometheusQuery drives the Prometheus Go API client through otelretry
// against the stack's real Prometheus, behind a counting proxy that answers
// the first query 503 itself or freezes it. The client sends its queries as
// POST: without an intent a 503 is not retried (stop, 1 request) and a
// frozen query ends check_state (ErrOutcomeUnknown, 1 request); with
// Intent{Repeatable: true}, on the query's context or through the
// readOnlyQueries wrapper, both are retried and the second request reaches
// Prometheus, which evaluates the query (return, 2 requests).
func TestPrometheusQuery(t *testing.T) {
	prometheus := stackEndpoint(t, envPrometheus)
	retried := func(first wantAttempt) wantOp {
		return wantOp{method: http.MethodPost, outcome: attrs.OutcomeReturn, contract: true,
			attempts: []wantAttempt{first, {status: 200, decision: attrs.DecisionReturn}}}
	}
	answered503 := wantAttempt{status: 503, decision: attrs.DecisionRetry}
	timedOut := wantAttempt{class: attrs.ErrorClassTimeout, decision: attrs.DecisionRetry}
	for _, tc := range []struct {
		name     string
		fault    fault
		wrap     bool // readOnlyQueries around the client
		query    func(context.Context, v1.API) (model.Value, error)
		received int
		want     wantOp
	}{
		{name: "503_without_intent", fault: unavailable, query: query, received: 1,
			want: wantOp{method: http.MethodPost, outcome: attrs.OutcomeStop,
				attempts: []wantAttempt{{status: 503, decision: attrs.DecisionStop}}}},
		{name: "503_with_intent", fault: unavailable, query: queryWithIntent, received: 2, want: retried(answered503)},
		{name: "503_with_wrapper", fault: unavailable, wrap: true, query: query, received: 2, want: retried(answered503)},
		{name: "frozen_without_intent", fault: frozen, query: query, received: 1,
			want: wantOp{method: http.MethodPost, outcome: attrs.OutcomeCheckState,
				attempts: []wantAttempt{{class: attrs.ErrorClassTimeout, decision: attrs.DecisionCheckState}}}},
		{name: "frozen_with_intent", fault: frozen, query: queryWithIntent, received: 2, want: retried(timedOut)},
		{name: "frozen_with_wrapper", fault: frozen, wrap: true, query: query, received: 2, want: retried(timedOut)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			px := newProxy(t, tel, prometheus, tc.fault)
			rt := tel.transport(t,
				otelretry.WithAttemptTimeout(300*time.Millisecond), otelretry.WithDeadline(2*time.Second),
				otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))

			client, err := api.NewClient(api.Config{
				Address:      px.URL,
				RoundTripper: rt,
			})
			if err != nil {
				t.Fatal(err)
			}
			promAPI := v1.NewAPI(client)
			if tc.wrap {
				promAPI = v1.NewAPI(readOnlyQueries{client})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			result, err := tc.query(ctx, promAPI)

			switch tc.want.outcome {
			case attrs.OutcomeReturn:
				if err != nil {
					t.Fatalf("query: %v", err)
				}
				if v, ok := result.(model.Vector); !ok || len(v) != 1 || v[0].Value != 1 {
					t.Errorf("vector(1) = %v, want one sample of value 1", result)
				}
			case attrs.OutcomeStop:
				// The 503 otelretry returned, as the client reports it.
				var perr *v1.Error
				if !errors.As(err, &perr) || perr.Type != v1.ErrServer {
					t.Errorf("error %v, want the client's server error for the 503", err)
				}
			case attrs.OutcomeCheckState:
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("error %v, want ErrOutcomeUnknown through the client", err)
				}
			}
			spans := tel.finished(px.server)
			if got := px.received.Load(); got != int64(tc.received) {
				t.Errorf("proxy received %d requests, want %d", got, tc.received)
			}
			var wantUpstream []int // a fault is never passed on
			if tc.received == 2 {
				wantUpstream = []int{http.StatusOK} // the retry, answered by Prometheus
			}
			if got := px.upstreamStatuses(); !slices.Equal(got, wantUpstream) {
				t.Errorf("Prometheus answered %v, want %v", got, wantUpstream)
			}
			ops := operations(t, spans)
			if len(ops) != 1 {
				t.Fatalf("%d operation spans, want 1", len(ops))
			}
			ops[0].check(t, spans, tc.want)
		})
	}
}

// TestPrometheusWrapperLeavesWritesAlone: readOnlyQueries marks only the
// read endpoints; an admin POST (clean_tombstones) answered 503 is not
// retried.
func TestPrometheusWrapperLeavesWritesAlone(t *testing.T) {
	prometheus := stackEndpoint(t, envPrometheus)
	tel := newTelemetry(t)
	px := newProxy(t, tel, prometheus, unavailable)
	client, err := api.NewClient(api.Config{Address: px.URL, RoundTripper: tel.transport(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var perr *v1.Error
	if err := v1.NewAPI(readOnlyQueries{client}).CleanTombstones(ctx); !errors.As(err, &perr) || perr.Type != v1.ErrServer {
		t.Errorf("error %v, want the client's server error for the 503", err)
	}
	spans := tel.finished(px.server)
	if got := px.received.Load(); got != 1 {
		t.Errorf("proxy received %d requests, want 1", got)
	}
	ops := operations(t, spans)
	if len(ops) != 1 {
		t.Fatalf("%d operation spans, want 1", len(ops))
	}
	ops[0].check(t, spans, wantOp{method: http.MethodPost, outcome: attrs.OutcomeStop,
		attempts: []wantAttempt{{status: 503, decision: attrs.DecisionStop}}})
}

// intentSeen is an api.Client that keeps the Intent of the context it is
// given.
type intentSeen struct {
	api.Client
	in otelretry.Intent
}

func (c *intentSeen) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	c.in, _ = otelretry.IntentFromContext(ctx)
	return nil, nil, errors.New("not sent")
}

// TestPrometheusWrapperKeepsTheCallersIntent: readOnlyQueries marks a query
// repeatable in the Intent the caller gave it, never in its place (a
// query the caller sent under NoRetry and MaxAttempts 2 keeps both).
func TestPrometheusWrapperKeepsTheCallersIntent(t *testing.T) {
	seen := &intentSeen{}
	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{NoRetry: true, MaxAttempts: 2})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://prometheus.test/api/v1/query", nil)
	readOnlyQueries{seen}.Do(ctx, req)
	if want := (otelretry.Intent{Repeatable: true, NoRetry: true, MaxAttempts: 2}); seen.in != want {
		t.Errorf("the client was given %+v, want %+v", seen.in, want)
	}
}
