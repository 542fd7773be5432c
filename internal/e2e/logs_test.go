// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// The sampling proof for logs: tail sampling drops most plain successes'
// traces, but never a log record. Every operation of the tiered workload
// has its retry.operation record and one retry.attempt record per attempt
// in VictoriaLogs, each with the trace and span id the client recorded;
// for every trace Jaeger kept, the trace id read from the log records
// resolves in Jaeger and holds the records' span ids; the traces of the
// others are gone, their records are not.

// logsDeadline bounds the wait for the records in VictoriaLogs (SDK batch,
// agent, Collector, VictoriaLogs' own buffering).
const logsDeadline = 60 * time.Second

// logsql runs a LogsQL query against VictoriaLogs' /select/logsql/query and
// returns its rows, one JSON object per line, every value a string.
func logsql(base, query string) ([]map[string]string, error) {
	body, err := httpGet(base + "/select/logsql/query?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		return nil, err
	}
	var rows []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var row map[string]string
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("LogsQL %q: %v in %.300s", query, err, sc.Bytes())
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// logFilter selects the records of one service in the last hour.
func logFilter(service string) string {
	return fmt.Sprintf(`_time:1h "service.name":=%s`, strconv.Quote(service))
}

// waitLogCounts polls a LogsQL count of the service's records by event
// name until it shows wantOps retry.operation and wantAttempts
// retry.attempt records, logs the query and its answer, and returns the
// counts by event name.
func waitLogCounts(t *testing.T, s stack, service string, wantOps, wantAttempts int) (map[string]int, error) {
	t.Helper()
	countQuery := logFilter(service) + " | stats by (event_name) count() n"
	deadline := time.Now().Add(logsDeadline)
	for polls := 1; ; polls++ {
		rows, err := logsql(s.victorialogs, countQuery)
		if err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, row := range rows {
			n, err := strconv.Atoi(row["n"])
			if err != nil {
				return nil, fmt.Errorf("LogsQL %q: row %v", countQuery, row)
			}
			counts[row["event_name"]] = n
		}
		if counts[attrs.LogEventOperation] == wantOps && counts[attrs.LogEventAttempt] == wantAttempts && len(counts) == 2 {
			t.Logf("victorialogs: %q counts %d %s and %d %s records, every one the %d operations emitted (%d polls)",
				countQuery, counts[attrs.LogEventAttempt], attrs.LogEventAttempt, counts[attrs.LogEventOperation], attrs.LogEventOperation, wantOps, polls)
			return counts, nil
		}
		if counts[attrs.LogEventOperation]+counts[attrs.LogEventAttempt] > wantOps+wantAttempts || time.Now().After(deadline) {
			return nil, fmt.Errorf("victorialogs: %q gives %v after %d polls; the operations emitted %d %s and %d %s records",
				countQuery, counts, polls, wantAttempts, attrs.LogEventAttempt, wantOps, attrs.LogEventOperation)
		}
		time.Sleep(pollEvery / 2)
	}
}

// checkDemoLogs checks the demo's log events in VictoriaLogs (the demo
// exports them with the rest to the Collector's OTLP endpoint): all of
// them, one operation record per operation of the summary, each in a trace.
// It returns the LogsQL counts by event name, and the operation records
// by operation id.
func checkDemoLogs(t *testing.T, s stack, run demoRun) (map[string]int, map[string]map[string]string) {
	counts, err := waitLogCounts(t, s, run.service, len(run.summary.Operations), run.summary.attemptCount())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := logsql(s.victorialogs, logFilter(run.service)+" event_name:="+strconv.Quote(attrs.LogEventOperation))
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]map[string]string{}
	for _, row := range rows {
		records[row[string(attrs.OperationIDKey)]] = row
	}
	for _, op := range run.summary.Operations {
		rec, ok := records[op.OperationID]
		if tr := rec["trace_id"]; !ok || len(tr) != 32 {
			t.Errorf("%s: operation record %v, trace id %q", op.OperationID, ok, tr)
		}
	}
	return counts, records
}

// checkLogs runs the proof over ops (warm-up included): first the counts by
// a LogsQL query, then each operation's records, then each trace id from
// the records against Jaeger once the samplers decided.
func checkLogs(t *testing.T, s stack, service string, ops []genResult, traceOf map[string]string, spans map[string]*opSpanIDs, lastSent time.Time) {
	wantOps, wantAttempts := len(ops), 0
	for _, r := range ops {
		wantAttempts += r.attempts
	}

	// 1. Every record arrived: count them in VictoriaLogs.
	if _, err := waitLogCounts(t, s, service, wantOps, wantAttempts); err != nil {
		t.Fatal(err)
	}

	// 2. Each operation's records, with the ids the client recorded.
	rows, err := logsql(s.victorialogs, logFilter(service))
	if err != nil {
		t.Fatal(err)
	}
	byOp := map[string][]map[string]string{}
	for _, row := range rows {
		byOp[row[string(attrs.OperationIDKey)]] = append(byOp[row[string(attrs.OperationIDKey)]], row)
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	planned := map[string]bool{}
	for _, r := range ops {
		planned[r.id] = true
		ids := spans[r.id]
		if ids == nil {
			fail("%s: the client recorded no spans", r.id)
			continue
		}
		var opRecs int
		attempts := map[int64]bool{}
		for _, row := range byOp[r.id] {
			if row["trace_id"] != traceOf[r.id] {
				fail("%s: %s record in trace %q, the client recorded %s", r.id, row["event_name"], row["trace_id"], traceOf[r.id])
			}
			switch row["event_name"] {
			case attrs.LogEventOperation:
				opRecs++
				if row["span_id"] != ids.op {
					fail("%s: operation record with span id %q, the operation span is %s", r.id, row["span_id"], ids.op)
				}
				if got := row[string(attrs.OutcomeKey)]; got != string(r.scenario.want) {
					fail("%s: operation record says %s=%q, want %q", r.id, attrs.OutcomeKey, got, r.scenario.want)
				}
				if got := row[string(attrs.AttemptsKey)]; got != strconv.Itoa(r.attempts) {
					fail("%s: operation record says %s=%q, the server saw %d", r.id, attrs.AttemptsKey, got, r.attempts)
				}
			case attrs.LogEventAttempt:
				n, err := strconv.ParseInt(row[string(attrs.AttemptKey)], 10, 64)
				if err != nil || attempts[n] {
					fail("%s: attempt record with %s=%q (seen before: %v)", r.id, attrs.AttemptKey, row[string(attrs.AttemptKey)], attempts[n])
					continue
				}
				attempts[n] = true
				if row["span_id"] != ids.attempts[n] {
					fail("%s: attempt %d record with span id %q, the attempt span is %s", r.id, n, row["span_id"], ids.attempts[n])
				}
			default:
				fail("%s: record with event_name %q", r.id, row["event_name"])
			}
		}
		if opRecs != 1 || len(attempts) != r.attempts {
			fail("%s (%s): %d operation records and %d attempt records, want 1 and %d", r.id, r.scenario.name, opRecs, len(attempts), r.attempts)
		}
	}
	for id, recs := range byOp {
		if !planned[id] {
			fail("%d records of operation %q, which the workload did not send", len(recs), id)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("victorialogs: %d problems:\n  %s", len(problems), joinMax(problems, 40))
	}

	// 3. From each operation record to its trace in Jaeger, after the
	// samplers decided: found for every interesting operation and for the
	// sampled share of plain successes, and exactly the traces a search
	// by service finds.
	opRecord := map[string]map[string]string{}
	for _, row := range rows {
		if row["event_name"] == attrs.LogEventOperation {
			opRecord[row[string(attrs.OperationIDKey)]] = row
		}
	}
	time.Sleep(time.Until(lastSent.Add(s.decisionWait + 2*time.Second)))
	found := map[string]*jaegerTrace{} // operation id -> its trace, looked up by the record's trace id
	deadline := time.Now().Add(jaegerDeadline)
	for polls := 1; ; polls++ {
		problems = problems[:0]
		lookupTraces(s.jaeger, ops, opRecord, found, &problems)
		searched, err := fetchTraces(s.jaeger, service, 20000)
		if err != nil {
			problems = append(problems, err.Error())
		}
		index := indexOperations(searched)
		for _, r := range ops {
			_, byID := found[r.id]
			_, bySearch := index[r.id]
			switch {
			case r.scenario.interesting && !byID:
				fail("%s (%s): trace %s of its log records is not in Jaeger", r.id, r.scenario.name, traceOf[r.id])
			case byID != bySearch:
				fail("%s: trace %s found by id: %v, by a search for the service: %v", r.id, traceOf[r.id], byID, bySearch)
			}
		}
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs to traces, after %d polls: %d problems:\n  %s", polls, len(problems), joinMax(problems, 40))
		}
		time.Sleep(pollEvery)
	}
	// Each trace found holds the spans the operation's records name.
	var interesting, plain, plainKept int
	for _, r := range ops {
		tr := found[r.id]
		if r.scenario.interesting {
			interesting++
		} else if !r.warmup {
			plain++
			if tr != nil {
				plainKept++
			}
		}
		if tr == nil {
			continue
		}
		have := map[string]bool{}
		for i := range tr.Spans {
			have[tr.Spans[i].SpanID] = true
		}
		for _, row := range byOp[r.id] {
			if !have[row["span_id"]] {
				fail("%s: trace %s has no span %s (%s record)", r.id, tr.TraceID, row["span_id"], row["event_name"])
			}
		}
	}
	if len(problems) > 0 {
		t.Fatalf("logs to traces: %d problems:\n  %s", len(problems), joinMax(problems, 40))
	}
	lo, hi := binomialBounds(plain, s.plainPercent/100, samplingAlpha)
	t.Logf("logs to traces: all %d operations have all their records; %d traces resolve from the records' trace ids in Jaeger, "+
		"each holding the records' span ids: all %d interesting operations and %d of %d plain successes (%.1f%%, configured %g%%, bounds [%d, %d]); "+
		"the other %d operations are in the log store only",
		len(ops), len(found), interesting, plainKept, plain, 100*float64(plainKept)/float64(plain), s.plainPercent, lo, hi, len(ops)-len(found))
	if plainKept < lo || plainKept > hi {
		t.Errorf("%d of %d plain successes resolve in Jaeger: outside [%d, %d]", plainKept, plain, lo, hi)
	}
}

// lookupTraces looks up, by id, the trace of every operation record not
// found yet, eight at a time, and adds those Jaeger has to found.
func lookupTraces(jaegerURL string, ops []genResult, opRecord map[string]map[string]string, found map[string]*jaegerTrace, problems *[]string) {
	var todo []string
	for _, r := range ops {
		if found[r.id] == nil {
			todo = append(todo, r.id)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, id := range todo {
		traceID := opRecord[id]["trace_id"]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			tr, ok, err := fetchTrace(jaegerURL, traceID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				*problems = append(*problems, err.Error())
			case ok && tr.TraceID != traceID:
				*problems = append(*problems, fmt.Sprintf("%s: asked Jaeger for trace %s, got %s", id, traceID, tr.TraceID))
			case ok:
				found[id] = &tr
			}
		}()
	}
	wg.Wait()
	sort.Strings(*problems)
}
