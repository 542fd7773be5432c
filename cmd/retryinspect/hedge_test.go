// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// hedgedRun plays hedged reads through otelretry.NewTransport with
// WithHedging (a fixed delay of 20 ms), on virtual time, and returns its
// spans as the stdouttrace exporter writes them and its log events as OTLP
// JSON lines. On one Transport whose hedge rate allows two hedges in a
// row: a hedge that wins, an attempt that wins over its hedge, a hedge the
// rate refuses (hedge_limit) and a read that answers before the delay. On
// another: a 503 while the hedge is in flight (retry, in_flight), then two
// rounds (both attempts fail; the retry is not hedged, since the
// operation's one hedge is spent: no delay is armed, and nothing is
// refused). And a search
// sent as POST, declared repeatable, whose hedge wins.
func hedgedRun(t *testing.T) (spans, logs []byte) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		logExp := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)))
		transport := func(base http.RoundTripper, rate float64) http.RoundTripper {
			return otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp),
				otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(5), otelretry.WithDeadline(time.Second),
				otelretry.WithoutBudget(), // the hedge rate alone refuses hedges here
				otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)),
				otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: rate}))
		}
		send := func(rt http.RoundTripper, method, url string, in otelretry.Intent) {
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(`{"q":"shoes"}`)
			}
			req, err := http.NewRequestWithContext(otelretry.WithIntent(ctx, in), method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		step := func(ms int, status int) scripted.Step {
			return scripted.Step{Delay: time.Duration(ms) * time.Millisecond, Status: status}
		}
		const items = "http://inventory.test/items"
		base := &switching{}
		// A rate of 0.02 a read allows a burst of two hedges.
		limited := transport(base, 0.02)
		for _, steps := range [][]scripted.Step{
			{step(100, 200), step(10, 200)}, // the hedge wins
			{step(25, 200), step(50, 200)},  // the attempt hedged wins
			{step(100, 200)},                // no hedge left: hedge_limit
			{step(5, 200)},                  // answers before the delay
		} {
			base.use(scripted.New(steps...))
			send(limited, http.MethodGet, items, otelretry.Intent{})
		}
		free := transport(base, 1)
		base.use(scripted.New(step(30, 503), step(50, 200))) // a 503 while the hedge is in flight
		send(free, http.MethodGet, items, otelretry.Intent{})
		base.use(scripted.New(step(100, 503), step(100, 503), step(100, 200), step(100, 200))) // two rounds
		send(free, http.MethodGet, items, otelretry.Intent{})
		base.use(scripted.New(step(100, 200), step(10, 200)))
		send(free, http.MethodPost, "http://search.test/query", otelretry.Intent{Repeatable: true})
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := lp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans, logs = out.Bytes(), logExp.buf.Bytes()
	})
	return spans, logs
}

// switching sends each request to the scripted base of the operation
// under way, so that operations on one Transport (one hedge rate) play
// scripts of their own.
type switching struct {
	mu   sync.Mutex
	next *scripted.Transport
}

func (s *switching) use(next *scripted.Transport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = next
}

func (s *switching) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	next := s.next
	s.mu.Unlock()
	return next.RoundTrip(req)
}

// TestTransportHedgesReadClean: the spans of the real transport's hedged
// reads raise no finding, and each dependency's headline gives its hedge
// rate, hedge win rate and refused hedges; the log events of the same run
// give the same rates (they hold no hedge_refused event, which is on the
// operation span only).
func TestTransportHedgesReadClean(t *testing.T) {
	spans, logs := hedgedRun(t)
	want := map[string]string{
		"inventory.test": "; hedge rate 0.667 (4 of 6 operations), hedge win rate 0.500 (2 of 4 hedged), hedges refused: hedge_limit 1\n",
		"search.test":    "; hedge rate 1.000 (1 of 1 operation), hedge win rate 1.000 (1 of 1 hedged), hedges refused: none\n",
	}
	code, out, errOut := runOnFile(t, spans, "-strict")
	if code != exitClean || errOut != "" {
		t.Fatalf("spans: exit %d, stderr %q\n%s", code, errOut, out)
	}
	for name, figures := range want {
		if !slices.ContainsFunc(slices.Collect(strings.Lines(out)), func(l string) bool {
			return strings.HasPrefix(l, "  "+name+": ") && strings.HasSuffix(l, figures)
		}) {
			t.Errorf("spans: no headline of %s ends %q:\n%s", name, figures, out)
		}
	}
	for _, line := range []string{
		"retry     in_flight         hedged after 20ms  -            0ms",
		"retry     retryable_status  of 1               -            10ms",
		"hedges refused hedge_limit",
		"error classes   race_lost 3 (23.1%)", // the three attempts that lost: a known class, no finding
	} {
		if !strings.Contains(out, line) {
			t.Errorf("spans: the report lacks %q:\n%s", line, out)
		}
	}

	code, fromLogs, errOut := runOnFile(t, logs, "-json")
	if code != exitClean || errOut != "" {
		t.Fatalf("logs: exit %d, stderr %q\n%s", code, errOut, fromLogs)
	}
	var r inspect.Report
	if err := json.Unmarshal([]byte(fromLogs), &r); err != nil {
		t.Fatal(err)
	}
	// VictoriaLogs stores every value as text: retry.hedge.of and
	// retry.hedge.sent_after_ms get their type back.
	records, err := read.VictoriaLogs(bytes.NewReader(toVictoriaLogs(t, logs)), "victorialogs", 0)
	if err != nil {
		t.Fatal(err)
	}
	victoria := inspect.Analyze(records)
	for name, r := range map[string]*inspect.Report{"logs": &r, "victorialogs": victoria} {
		var got []string
		for _, d := range r.Dependencies {
			if h := d.Hedging; h != nil {
				got = append(got, d.Name, ratioText(h.HedgeRate), ratioText(h.WinRate))
			}
		}
		if want := []string{"inventory.test", "4/6", "2/4", "search.test", "1/1", "1/1"}; !slices.Equal(got, want) || len(r.Findings) > 0 {
			t.Errorf("%s: hedging %v, want %v; findings %v", name, got, want, r.Findings)
		}
	}
}

func ratioText(r inspect.Ratio) string { return strconv.Itoa(r.Count) + "/" + strconv.Itoa(r.Total) }
