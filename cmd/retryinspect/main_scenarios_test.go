// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// sceneRun is one run of the real transport on virtual time: its spans,
// log records and metrics.
type sceneRun struct {
	spans, logs []byte
	metrics     metricdata.ResourceMetrics
}

type sceneEnv struct {
	tp   *sdktrace.TracerProvider
	lp   *sdklog.LoggerProvider
	mp   *sdkmetric.MeterProvider
	ctx  context.Context // under the handler's span
	opts []otelretry.Option
}

func (e *sceneEnv) transport(base http.RoundTripper, opts ...otelretry.Option) http.RoundTripper {
	all := append([]otelretry.Option{otelretry.WithTracerProvider(e.tp), otelretry.WithLoggerProvider(e.lp),
		otelretry.WithMeterProvider(e.mp), otelretry.WithoutClientSpans()}, opts...)
	return otelretry.NewTransport(base, all...)
}

func runScene(t *testing.T, play func(t *testing.T, e *sceneEnv)) sceneRun {
	t.Helper()
	var r sceneRun
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		logExp := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		play(t, &sceneEnv{tp: tp, lp: lp, mp: mp, ctx: ctx})
		handler.End()
		if err := reader.Collect(context.Background(), &r.metrics); err != nil {
			t.Fatal(err)
		}
		tp.Shutdown(context.Background())
		lp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
		r.spans, r.logs = out.Bytes(), logExp.buf.Bytes()
	})
	return r
}

// counter sums an Int64 counter by the value of one attribute.
func counter(rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]int {
	out := map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				v, _ := dp.Attributes.Value(key)
				out[v.Emit()] += int(dp.Value)
			}
		}
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sharesMap(s []inspect.Share) map[string]int {
	out := map[string]int{}
	for _, x := range s {
		out[x.Value] = x.Count
	}
	return out
}

func mapText(m map[string]int) string {
	var keys []string
	for k, v := range m {
		if v != 0 {
			keys = append(keys, fmt.Sprintf("%s=%d", k, v))
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

func send(t *testing.T, rt http.RoundTripper, ctx context.Context, method, url string) (int, error) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost || method == http.MethodPut {
		body = strings.NewReader(`{"sku":"A-1"}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func step(ms int, status int) scripted.Step {
	return scripted.Step{Delay: time.Duration(ms) * time.Millisecond, Status: status}
}

// compareWithMetrics checks that retryinspect's summary (from the spans)
// counts the operations, attempts, decisions and outcomes the library's
// own metrics counted, and its retry and deadline ratios equal theirs.
func compareWithMetrics(t *testing.T, name string, r sceneRun, rep *inspect.Report) {
	t.Helper()
	decisions := counter(r.metrics, "retry.attempts", "retry.decision")
	outcomes := counter(r.metrics, "retry.operations", "retry.outcome")
	if got, want := mapText(sharesMap(rep.Summary.Decisions)), mapText(decisions); got != want {
		t.Errorf("%s: decisions: retryinspect %s; metrics %s", name, got, want)
	}
	if got, want := mapText(sharesMap(rep.Summary.Outcomes)), mapText(outcomes); got != want {
		t.Errorf("%s: outcomes: retryinspect %s; metrics %s", name, got, want)
	}
	if rep.Summary.Attempts != total(decisions) {
		t.Errorf("%s: attempts: retryinspect %d; metrics %d", name, rep.Summary.Attempts, total(decisions))
	}
	if rep.Summary.Operations != total(outcomes) {
		t.Errorf("%s: operations: retryinspect %d; metrics %d", name, rep.Summary.Operations, total(outcomes))
	}
	if got, want := rep.Summary.RetryRatio, (inspect.Ratio{Count: decisions["retry"], Total: total(decisions)}); got.Count != want.Count || got.Total != want.Total {
		t.Errorf("%s: retry ratio: retryinspect %d/%d; metrics %d/%d", name, got.Count, got.Total, want.Count, want.Total)
	}
	if got, want := rep.Summary.DeadlineRatio, (inspect.Ratio{Count: outcomes["deadline_exceeded"], Total: total(outcomes)}); got.Count != want.Count || got.Total != want.Total {
		t.Errorf("%s: deadline ratio: retryinspect %d/%d; metrics %d/%d", name, got.Count, got.Total, want.Count, want.Total)
	}
	throttled := total(counter(r.metrics, "retry.throttled", "http.request.method"))
	refused := 0
	for _, d := range rep.Dependencies {
		refused += d.ThrottleRefused
	}
	if refused != throttled {
		t.Errorf("%s: throttle refusals: retryinspect %d; metrics retry.throttled %d", name, refused, throttled)
	}
}

func findingCodes(rep *inspect.Report) map[string]int {
	out := map[string]int{}
	for _, f := range rep.Findings {
		out[string(f.Code)]++
	}
	return out
}

func reportJSON(t *testing.T, data []byte, extra ...string) (int, *inspect.Report, string) {
	t.Helper()
	code, out, errOut := runOnFile(t, data, append([]string{"-json"}, extra...)...)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep inspect.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return code, &rep, out
}

type scenario struct {
	name string
	play func(t *testing.T, e *sceneEnv)
	// findings expected from the spans (code → count); nil for none.
	findings map[string]int
}

func sceneScenarios() []scenario {
	const items = "http://inventory.test/items"
	return []scenario{
		{name: "retries then success", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(step(10, 503), step(10, 503), step(10, 200)), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			if s, err := send(t, rt, e.ctx, http.MethodGet, items); err != nil || s != 200 {
				t.Fatalf("%d %v", s, err)
			}
		}},
		{name: "hedged reads", play: func(t *testing.T, e *sceneEnv) {
			base := &switching{}
			rt := e.transport(base, otelretry.WithoutBudget(), otelretry.WithMaxAttempts(4), otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1, MaxHedges: 2}))
			for _, steps := range [][]scripted.Step{
				{step(100, 200), step(10, 200)},
				{step(30, 200), step(50, 200)},
				{step(100, 200), step(100, 200), step(5, 200)},
				{step(5, 200)},
			} {
				base.use(scripted.New(steps...))
				if s, err := send(t, rt, e.ctx, http.MethodGet, items); err != nil || s != 200 {
					t.Fatalf("%d %v", s, err)
				}
			}
		}},
		{name: "keyed writes retried", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}, step(10, 503), step(10, 201)),
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			if s, err := send(t, rt, e.ctx, http.MethodPost, "http://orders.test/orders"); err != nil || s != 201 {
				t.Fatalf("%d %v", s, err)
			}
		}},
		{name: "state checks", play: func(t *testing.T, e *sceneEnv) {
			for _, state := range []attrs.StateCheckResult{attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown} {
				hook := stateCheckAnswering(state)
				rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}, step(10, 201)), otelretry.WithStateCheck(hook))
				_, err := send(t, rt, e.ctx, http.MethodPost, "http://orders.test/orders/"+string(state))
				if (state == attrs.StateUnknown) != errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Fatalf("%s: %v", state, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}},
		{name: "budget refusals", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(step(10, 503)), otelretry.WithBudget(&otelretry.Budget{Tokens: 4}), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			for range 3 {
				send(t, rt, e.ctx, http.MethodGet, items)
			}
		}},
		{name: "throttle refusals", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(step(10, 503)), otelretry.WithThrottle(&otelretry.Throttle{}), otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			for range 30 {
				send(t, rt, e.ctx, http.MethodGet, items)
			}
		}},
		{name: "deadline cuts", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(scripted.Step{Delay: 10 * time.Millisecond, Status: 503, Header: http.Header{"Retry-After": {"5"}}}, step(10, 200)),
				otelretry.WithDeadline(time.Second))
			send(t, rt, e.ctx, http.MethodGet, items)
			rt = e.transport(scripted.New(scripted.Step{Hang: true}), otelretry.WithDeadline(300*time.Millisecond), otelretry.WithAttemptTimeout(200*time.Millisecond))
			send(t, rt, e.ctx, http.MethodGet, items+"/slow")
		}},
		{name: "redirects", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(redirectTo("http://inventory.test/v2/items"), step(10, 503), step(10, 200)))
			if s, err := send(t, rt, e.ctx, http.MethodGet, items); err != nil || s != 200 {
				t.Fatalf("%d %v", s, err)
			}
			rt = e.transport(scripted.New(scripted.Step{Status: http.StatusSeeOther, Header: http.Header{"Location": {"http://orders.test/orders/1"}}}, step(10, 200)))
			if s, err := send(t, rt, e.ctx, http.MethodPost, "http://orders.test/orders"); err != nil || s != 200 {
				t.Fatalf("%d %v", s, err)
			}
		}},
		{name: "two stacked transports", play: func(t *testing.T, e *sceneEnv) {
			inner := e.transport(scripted.New(step(10, 503), step(10, 503), step(10, 503), step(10, 200)), otelretry.WithMaxAttempts(2))
			outer := e.transport(inner, otelretry.WithMaxAttempts(3))
			send(t, outer, e.ctx, http.MethodGet, items)
		}},
		{name: "32 in flight", play: func(t *testing.T, e *sceneEnv) {
			base := scripted.New(step(10, 503), step(10, 503), step(10, 503), step(10, 503), step(10, 200))
			rt := e.transport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			var wg sync.WaitGroup
			for i := range 32 {
				wg.Go(func() { send(t, rt, e.ctx, http.MethodGet, fmt.Sprintf("%s/%d", items, i)) })
			}
			wg.Wait()
		}},
		{name: "sdk loop resends a write", findings: map[string]int{"outer-layer-resend": 2}, play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(step(10, 500)))
			ctx := otelretry.WithOperationID(e.ctx, "sdk-op")
			for range 3 {
				send(t, rt, ctx, http.MethodPost, "http://payments.test/charges")
				time.Sleep(50 * time.Millisecond)
			}
		}},
	}
}

// Each scenario through the real transport: retryinspect's summary
// counts what the library's metrics counted, and it finds what it
// documents and nothing else.
func TestScenariosAgreeWithMetrics(t *testing.T) {
	for _, sc := range sceneScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			r := runScene(t, sc.play)
			code, rep, out := reportJSON(t, r.spans)
			compareWithMetrics(t, sc.name, r, rep)
			want := sc.findings
			if want == nil {
				want = map[string]int{}
			}
			if got := findingCodes(rep); mapText(got) != mapText(want) {
				t.Errorf("findings from spans: %s; want %s (exit %d)\n%s", mapText(got), mapText(want), code, textOf(t, r.spans))
			}
			_ = out
			lcode, lrep, _ := reportJSON(t, r.logs)
			if got := findingCodes(lrep); mapText(got) != mapText(want) {
				t.Errorf("findings from logs: %s; want %s (exit %d)\n%s", mapText(got), mapText(want), lcode, textOf(t, r.logs))
			}
			if got, want := mapText(sharesMap(lrep.Summary.Decisions)), mapText(sharesMap(rep.Summary.Decisions)); got != want {
				t.Errorf("decisions from logs %s, from spans %s", got, want)
			}
			if got, want := mapText(sharesMap(lrep.Summary.Outcomes)), mapText(sharesMap(rep.Summary.Outcomes)); got != want {
				t.Errorf("outcomes from logs %s, from spans %s", got, want)
			}
		})
	}
}

func textOf(t *testing.T, data []byte) string {
	_, out, _ := runOnFile(t, data)
	return out
}

type unknownLength struct{ r io.Reader }

func (u *unknownLength) Read(p []byte) (int, error) { return u.r.Read(p) }

func extraScenarios() []scenario {
	return []scenario{
		{name: "stacked write timeout", play: func(t *testing.T, e *sceneEnv) {
			inner := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}, step(10, 201)))
			outer := e.transport(inner)
			_, err := send(t, outer, e.ctx, http.MethodPost, "http://orders.test/orders")
			t.Logf("err %v", err)
		}},
		{name: "keyed loop unknown length under id", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}), otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithIdempotencyKeyValues(), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
			ctx := otelretry.WithOperationID(e.ctx, "sdk-op")
			for range 2 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", &unknownLength{strings.NewReader(`{"a":1}`)})
				resp, err := (&http.Client{Transport: rt}).Do(req)
				if err == nil {
					resp.Body.Close()
				}
				t.Logf("err %v", err)
				time.Sleep(50 * time.Millisecond)
			}
		}},
		{name: "keyed loop without id", play: func(t *testing.T, e *sceneEnv) {
			rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}), otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithIdempotencyKeyValues(), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
			for range 2 {
				_, err := send(t, rt, e.ctx, http.MethodPost, "http://orders.test/orders")
				t.Logf("err %v", err)
				time.Sleep(50 * time.Millisecond)
			}
		}},
		{name: "loop after state checks", play: func(t *testing.T, e *sceneEnv) {
			for _, state := range []attrs.StateCheckResult{attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown} {
				hook := stateCheckAnswering(state)
				rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}), otelretry.WithStateCheck(hook), otelretry.WithMaxAttempts(2))
				ctx := otelretry.WithOperationID(e.ctx, "sdk-"+string(state))
				for range 2 {
					_, err := send(t, rt, ctx, http.MethodPost, "http://orders.test/orders/"+string(state))
					t.Logf("%s: err %v", state, err)
					time.Sleep(50 * time.Millisecond)
				}
			}
		}},
		{name: "32 in flight hedged with budget", play: func(t *testing.T, e *sceneEnv) {
			base := scripted.New(step(100, 503), step(30, 503), step(100, 200), step(10, 503), step(50, 200), step(10, 200))
			rt := e.transport(base, otelretry.WithBudget(&otelretry.Budget{Tokens: 20}), otelretry.WithThrottle(&otelretry.Throttle{}), otelretry.WithMaxAttempts(4), otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 0.5}), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
			var wg sync.WaitGroup
			for i := range 32 {
				wg.Go(func() { send(t, rt, e.ctx, http.MethodGet, fmt.Sprintf("http://inventory.test/items/%d", i)) })
			}
			wg.Wait()
		}},
	}
}

// keyValues lists the distinct retry.idempotency_key.value values in a
// stdouttrace file.
func keyValues(spans []byte) map[string]bool {
	out := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(spans))
	for {
		var s struct {
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		if err := dec.Decode(&s); err != nil {
			return out
		}
		for _, kv := range s.Attributes {
			if kv.Key == "retry.idempotency_key.value" {
				out[fmt.Sprint(kv.Value.Value)] = true
			}
		}
	}
}

// A layer above resends a write whose outcome the transport left unknown
// (the error matches ErrOutcomeUnknown) and the transport sends the
// resend under a key of its own, a new one (docs/layers.md: "Without an
// operation id, each try is an operation with a key of its own"; "a body
// of unknown length ... cannot be told, and each try gets a key of its
// own"). The spans show two different keys (WithIdempotencyKeyValues) and
// the transport's repeat marker: a server that deduplicates by key
// applies the write twice. retryinspect reports no outer-layer-resend,
// because the later operation carries a key, any key.
func TestAWriteResentUnderAFreshKeyIsAnOuterLayerResend(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		body func() io.Reader
	}{
		{"no operation id", "", func() io.Reader { return strings.NewReader(`{"a":1}`) }},
		{"one operation id, body of unknown length", "sdk-op", func() io.Reader { return &unknownLength{strings.NewReader(`{"a":1}`)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unknown := 0
			r := runScene(t, func(t *testing.T, e *sceneEnv) {
				rt := e.transport(scripted.New(scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}),
					otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithIdempotencyKeyValues(),
					otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
				ctx := e.ctx
				if tc.id != "" {
					ctx = otelretry.WithOperationID(ctx, tc.id)
				}
				for range 2 { // an SDK's retryer: the write again after an error
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", tc.body())
					resp, err := (&http.Client{Transport: rt}).Do(req)
					if err == nil {
						resp.Body.Close()
					}
					if errors.Is(err, otelretry.ErrOutcomeUnknown) {
						unknown++
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
			keys := keyValues(r.spans)
			if unknown != 2 || len(keys) != 2 {
				t.Fatalf("setup: %d errors of unknown outcome, want 2; %d distinct keys on the spans, want 2", unknown, len(keys))
			}
			code, rep, _ := reportJSON(t, r.spans)
			if findingCodes(rep)["outer-layer-resend"] != 1 {
				t.Errorf("the write whose outcome was unknown was sent again by a layer above under another key (%d keys on the spans, retry.operation.repeat on the second); retryinspect: exit %d, findings %q\n%s",
					len(keys), code, mapText(findingCodes(rep)), textOf(t, r.spans))
			}
		})
	}
}

// A write times out, its state check says not_applied, the transport
// resends it, that resend times out and its state check says not_applied
// again; the attempt limit ends the operation (max_attempts) with the
// outcome known: not applied (the error does not match
// ErrOutcomeUnknown). A layer above configured as docs/layers.md advises
// (otelretryDecides: retry max_attempts unless ErrOutcomeUnknown) sends
// the write again. Nothing can be applied twice, and retryinspect does not
// call the transport's own resend after not_applied unsafe; it reported
// the layer's as an outer-layer-resend, from spans and from log records.
func TestAResendAfterNotAppliedIsNoOuterLayerResend(t *testing.T) {
	var errs []error
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		timeout := scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}
		rt := e.transport(scripted.New(timeout, timeout, step(10, 201)),
			otelretry.WithStateCheck(stateCheckAnswering(attrs.StateNotApplied)), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
		ctx := otelretry.WithOperationID(e.ctx, "sdk-op")
		for {
			_, err := send(t, rt, ctx, http.MethodPost, "http://orders.test/orders")
			var oe *otelretry.Error
			if err == nil || !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeMaxAttempts || errors.Is(err, otelretry.ErrOutcomeUnknown) {
				break // docs/layers.md's otelretryDecides: stop
			}
			errs = append(errs, err)
			time.Sleep(50 * time.Millisecond)
		}
	})
	if len(errs) != 1 {
		t.Fatalf("setup: %d tries ended max_attempts with a known outcome, want 1: %v", len(errs), errs)
	}
	// From the spans, and from the log records of the same run, which
	// carry no state check's answer (docs/retryinspect.md: what only the
	// span tree tells is a needs-spans note, never a false finding).
	for name, data := range map[string][]byte{"spans": r.spans, "log records": r.logs} {
		code, rep, _ := reportJSON(t, data)
		if n := findingCodes(rep)["outer-layer-resend"]; n != 0 {
			t.Errorf("from the %s: a write its state checks found not_applied, sent again by a layer above once the transport gave up for lack of attempts (outcome known); retryinspect: exit %d, %d outer-layer-resend\n%s", name, code, n, textOf(t, data))
		}
	}
}

// stateCheckAnswering is a state check that answers state, with a stored
// 201 when the write was applied.
func stateCheckAnswering(state attrs.StateCheckResult) func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
	return func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		res := otelretry.StateResult{State: state}
		if state == attrs.StateApplied {
			res.Response = &http.Response{StatusCode: 201, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: c.Request}
		}
		return res, nil
	}
}

// A keyed write sent again at once by a layer above under one
// WithOperationID goes out under its key (the values recorded agree): from
// log records, whose ends are whole milliseconds, the repeat that began
// within the earlier one's last millisecond is no question the spans must
// answer: no finding and no note.
func TestAKeyedRepeatUnderItsKeyIsNoQuestionFromLogs(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		rt := e.transport(scripted.New(step(0, 503)),
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithIdempotencyKeyValues(),
			otelretry.WithMaxAttempts(1))
		ctx := otelretry.WithOperationID(e.ctx, "sdk-op")
		for range 2 {
			if s, err := send(t, rt, ctx, http.MethodPost, "http://orders.test/orders"); err != nil || s != 503 {
				t.Fatalf("%d %v", s, err)
			}
		}
	})
	if keys := keyValues(r.spans); len(keys) != 1 {
		t.Fatalf("setup: %d keys on the spans, want one", len(keys))
	}
	for name, data := range map[string][]byte{"spans": r.spans, "log records": r.logs} {
		_, rep, _ := reportJSON(t, data)
		if len(rep.Findings) != 0 || len(rep.Notes) != 0 {
			t.Errorf("from the %s: findings %+v, notes %+v", name, rep.Findings, rep.Notes)
		}
	}
}
