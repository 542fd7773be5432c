// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
)

// Jaeger's query HTTP API (/api/traces), as served by Jaeger v2's jaeger_query.
type jaegerResponse struct {
	Data   []jaegerTrace `json:"data"`
	Errors []struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

type jaegerTrace struct {
	TraceID   string                   `json:"traceID"`
	Spans     []jaegerSpan             `json:"spans"`
	Processes map[string]jaegerProcess `json:"processes"`
}

type jaegerProcess struct {
	ServiceName string      `json:"serviceName"`
	Tags        []jaegerTag `json:"tags"`
}

// tag returns a resource attribute of the process.
func (p jaegerProcess) tag(key string) string {
	for _, t := range p.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

type jaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []jaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"` // µs
	Duration      int64       `json:"duration"`  // µs
	Tags          []jaegerTag `json:"tags"`
	ProcessID     string      `json:"processID"`

	tags map[string]any
}

type jaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

func (s *jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" && r.TraceID == s.TraceID {
			return r.SpanID
		}
	}
	return ""
}

// kind is the span kind in lower case, as Jaeger's span.kind tag spells it.
func (s *jaegerSpan) kind() string {
	k, _ := s.tags["span.kind"].(string)
	if k == "" {
		return "internal" // Jaeger omits span.kind for INTERNAL spans
	}
	return k
}

func (s *jaegerSpan) has(key attribute.Key) bool { _, ok := s.tags[string(key)]; return ok }

func (s *jaegerSpan) str(key attribute.Key) string {
	switch v := s.tags[string(key)].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// int returns an integer tag; ok is false when absent or not an integer.
func (s *jaegerSpan) int(key attribute.Key) (int64, bool) {
	switch v := s.tags[string(key)].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func (s *jaegerSpan) String() string {
	return fmt.Sprintf("span %s %q (%s)", s.SpanID, s.OperationName, s.kind())
}

// isOperation and isAttempt tell the operation span and the attempt spans
// by their attributes, the same in every span shape: only the operation
// span carries retry.outcome, only attempt spans retry.attempt.
func (s *jaegerSpan) isOperation() bool { return s.has(attrs.OutcomeKey) }
func (s *jaegerSpan) isAttempt() bool   { return s.has(attrs.AttemptKey) }

// fetchTraces returns every trace of service found in the last hour.
func fetchTraces(jaegerURL, service string, limit int) ([]jaegerTrace, error) {
	q := url.Values{}
	q.Set("service", service)
	q.Set("lookback", "1h")
	q.Set("limit", strconv.Itoa(limit))
	return getTraces(jaegerURL + "/api/traces?" + q.Encode())
}

// fetchTrace returns one trace by id; found is false when Jaeger has none.
func fetchTrace(jaegerURL, traceID string) (tr jaegerTrace, found bool, err error) {
	resp, err := httpClient.Get(jaegerURL + "/api/traces/" + url.PathEscape(traceID))
	if err != nil {
		return tr, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return tr, false, err
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return tr, false, nil
	case http.StatusOK:
	default:
		return tr, false, fmt.Errorf("GET /api/traces/%s: %s: %.300s", traceID, resp.Status, body)
	}
	traces, err := decodeTraces(body)
	if err != nil || len(traces) == 0 {
		return tr, false, err
	}
	return traces[0], true, nil
}

func getTraces(u string) ([]jaegerTrace, error) {
	body, err := httpGet(u)
	if err != nil {
		return nil, err
	}
	return decodeTraces(body)
}

func decodeTraces(body []byte) ([]jaegerTrace, error) {
	var r jaegerResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding /api/traces: %v", err)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("/api/traces: %+v", r.Errors)
	}
	for i := range r.Data {
		indexTags(&r.Data[i])
	}
	return r.Data, nil
}

func indexTags(tr *jaegerTrace) {
	for j := range tr.Spans {
		s := &tr.Spans[j]
		s.tags = make(map[string]any, len(s.Tags))
		for _, tag := range s.Tags {
			s.tags[tag.Key] = tag.Value
		}
	}
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func httpGet(u string) ([]byte, error) {
	resp, err := httpClient.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.500s", u, resp.Status, body)
	}
	return body, nil
}

// opSpans is what a set of traces holds for one operation id.
type opSpans struct {
	traces   map[string]*jaegerTrace // trace id -> trace holding spans of the operation
	ops      []*jaegerSpan           // operation spans
	attempts []*jaegerSpan           // attempt spans
	checks   []*jaegerSpan           // state_check spans
}

// indexOperations groups the spans of traces by retry.operation.id, using
// attributes only (no parent/child, no kinds).
func indexOperations(traces []jaegerTrace) map[string]*opSpans {
	out := map[string]*opSpans{}
	for i := range traces {
		tr := &traces[i]
		for j := range tr.Spans {
			s := &tr.Spans[j]
			id := s.str(attrs.OperationIDKey)
			if id == "" {
				continue
			}
			o := out[id]
			if o == nil {
				o = &opSpans{traces: map[string]*jaegerTrace{}}
				out[id] = o
			}
			o.traces[tr.TraceID] = tr
			switch {
			case s.isOperation():
				o.ops = append(o.ops, s)
			case s.isAttempt():
				o.attempts = append(o.attempts, s)
			case s.OperationName == attrs.StateCheckSpanName:
				o.checks = append(o.checks, s)
			}
		}
	}
	for _, o := range out {
		sort.Slice(o.attempts, func(i, j int) bool {
			a, _ := o.attempts[i].int(attrs.AttemptKey)
			b, _ := o.attempts[j].int(attrs.AttemptKey)
			return a < b
		})
	}
	return out
}

// demoServerService is the service.name of the demo's flaky server
// (examples/demo's serverService).
const demoServerService = "flaky-server"

// checkTraces compares the traces of one demo run with its summary and
// returns every violation found (empty when all holds).
func checkTraces(traces []jaegerTrace, run demoRun) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	want := map[string]operation{}
	for _, op := range run.summary.Operations {
		want[op.OperationID] = op
	}
	for i := range traces {
		tr := &traces[i]
		for j := range tr.Spans {
			s := &tr.Spans[j]
			// The demo's server is another service (the README's picture):
			// its SERVER spans sit under the attempts, with a resource of
			// their own.
			service := run.service
			if s.kind() == "server" {
				service = demoServerService
			}
			if p, ok := tr.Processes[s.ProcessID]; !ok || p.ServiceName != service {
				fail("trace %s: %v has service %q, want %q", tr.TraceID, s, p.ServiceName, service)
			}
			checkURLRedacted(tr, s, fail)
		}
	}
	index := indexOperations(traces)
	var totalOps, totalAttempts int
	for id, o := range index {
		if _, ok := want[id]; !ok {
			fail("retry.operation.id %q in Jaeger is not in the summary", id)
		}
		totalOps += len(o.ops)
		totalAttempts += len(o.attempts)
	}
	if totalOps != len(want) {
		fail("%d operation spans in Jaeger, %d operations in the summary", totalOps, len(want))
	}
	if n := run.summary.attemptCount(); totalAttempts != n {
		fail("%d attempt spans in Jaeger, %d attempts in the summary", totalAttempts, n)
	}

	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		op := want[id]
		o := index[id]
		if o == nil {
			fail("%s: no span in Jaeger", id)
			continue
		}
		if n := len(o.traces); n != 1 {
			fail("%s: spans in %d traces, want exactly 1", id, n)
		}
		if n := len(o.ops); n != 1 {
			fail("%s: %d operation spans, want exactly 1", id, n)
			continue
		}
		checkOperationAttributes(o, op, fail)
		tr := o.traces[o.ops[0].TraceID]
		checkSpanTree(tr, o.ops[0], op.treeWant(), fail)
	}
	return problems
}

// treeWant is what the span tree of a demo operation must hold.
func (o operation) treeWant() opTree {
	t := opTree{id: o.OperationID, method: o.Method, stateCheck: o.StateCheck != ""}
	for _, a := range o.Attempts {
		t.statuses = append(t.statuses, a.Status)
	}
	return t
}

// checkOperationAttributes checks the attributes of one demo operation's
// operation and attempt spans against its summary. It finds the spans by
// their attributes, so it holds for every span shape.
func checkOperationAttributes(o *opSpans, op operation, fail func(string, ...any)) {
	id := op.OperationID
	opSpan := o.ops[0]
	for key, want := range map[attribute.Key]string{
		attrs.HTTPRequestMethodKey: op.Method,
		attrs.OutcomeKey:           op.Outcome,
		attrs.AttemptsKey:          strconv.Itoa(len(op.Attempts)),
	} {
		if got := opSpan.str(key); got != want {
			fail("%s: operation span %s = %q, want %q", id, key, got, want)
		}
	}
	for _, key := range []attribute.Key{attrs.URLFullKey, attrs.ServerAddressKey} {
		if opSpan.str(key) == "" {
			fail("%s: operation span has no %s", id, key)
		}
	}
	switch {
	case op.StateCheck == "" && len(o.checks) > 0:
		fail("%s: %d state_check spans, the summary has no state check", id, len(o.checks))
	case op.StateCheck != "" && len(o.checks) != 1:
		fail("%s: %d state_check spans, want 1 (summary: %s)", id, len(o.checks), op.StateCheck)
	case op.StateCheck != "":
		if got := o.checks[0].str(attrs.StateCheckResultKey); got != op.StateCheck {
			fail("%s: state_check %s = %q, summary %q", id, attrs.StateCheckResultKey, got, op.StateCheck)
		}
	}
	if len(o.attempts) != len(op.Attempts) {
		fail("%s: %d attempt spans, %d attempts in the summary", id, len(o.attempts), len(op.Attempts))
		return
	}
	lastRemaining := int64(-1)
	for i, as := range o.attempts {
		sa := op.Attempts[i]
		where := fmt.Sprintf("%s attempt %d", id, i+1)
		if n, ok := as.int(attrs.AttemptKey); !ok || n != int64(i+1) {
			fail("%s: %s = %q", where, attrs.AttemptKey, as.str(attrs.AttemptKey))
		}
		for key, want := range map[attribute.Key]string{
			attrs.OperationIDKey:       id,
			attrs.RequestIDKey:         sa.RequestID,
			attrs.HTTPRequestMethodKey: op.Method,
			attrs.DecisionKey:          sa.Decision,
		} {
			if got := as.str(key); got != want {
				fail("%s: %s = %q, want %q", where, key, got, want)
			}
		}
		// status xor error class, matching the summary.
		hasStatus, hasClass := as.has(attrs.HTTPResponseStatusCodeKey), as.has(attrs.ErrorClassKey)
		if hasStatus == hasClass {
			fail("%s: %s present=%v, %s present=%v: want exactly one", where,
				attrs.HTTPResponseStatusCodeKey, hasStatus, attrs.ErrorClassKey, hasClass)
		}
		if sa.Status != 0 {
			if got, _ := as.int(attrs.HTTPResponseStatusCodeKey); got != int64(sa.Status) {
				fail("%s: %s = %q, summary status %d", where, attrs.HTTPResponseStatusCodeKey,
					as.str(attrs.HTTPResponseStatusCodeKey), sa.Status)
			}
		} else if got := as.str(attrs.ErrorClassKey); got != sa.ErrorClass {
			fail("%s: %s = %q, summary %q", where, attrs.ErrorClassKey, got, sa.ErrorClass)
		}
		elapsed, okE := as.int(attrs.ElapsedMsKey)
		remaining, okR := as.int(attrs.RemainingMsKey)
		if !okE || elapsed < 0 {
			fail("%s: %s = %q", where, attrs.ElapsedMsKey, as.str(attrs.ElapsedMsKey))
		}
		if !okR {
			fail("%s: %s = %q", where, attrs.RemainingMsKey, as.str(attrs.RemainingMsKey))
		} else {
			if lastRemaining >= 0 && remaining > lastRemaining {
				fail("%s: %s grew from %d to %d", where, attrs.RemainingMsKey, lastRemaining, remaining)
			}
			lastRemaining = remaining
		}
		for _, key := range []attribute.Key{attrs.RetryAfterMsKey, attrs.BackoffMsKey} {
			if as.has(key) {
				if v, ok := as.int(key); !ok || v < 0 {
					fail("%s: %s = %q", where, key, as.str(key))
				}
			}
		}
		if as.has(attrs.HTTPRequestResendCountKey) {
			if v, _ := as.int(attrs.HTTPRequestResendCountKey); v != int64(i) {
				fail("%s: %s = %q, want %d", where, attrs.HTTPRequestResendCountKey, as.str(attrs.HTTPRequestResendCountKey), i)
			}
		}
	}
}

// checkURLRedacted fails for a url.full or url.query whose query values are
// not all REDACTED: query secrets never reach a trace (keys stay).
func checkURLRedacted(tr *jaegerTrace, s *jaegerSpan, fail func(string, ...any)) {
	for _, key := range []attribute.Key{attrs.URLFullKey, "url.query"} {
		v := s.str(key)
		if v == "" {
			continue
		}
		raw := v
		if key == attrs.URLFullKey {
			u, err := url.Parse(v)
			if err != nil {
				fail("trace %s: %v has an unparsable %s %q", tr.TraceID, s, key, v)
				continue
			}
			if u.User != nil && u.User.String() != attrs.Redacted+":"+attrs.Redacted {
				fail("trace %s: %v: %s %q carries user info", tr.TraceID, s, key, v)
			}
			raw = u.RawQuery
		}
		q, err := url.ParseQuery(raw)
		if err != nil {
			fail("trace %s: %v has an unparsable query in %s %q", tr.TraceID, s, key, v)
			continue
		}
		for k, vals := range q {
			for _, val := range vals {
				if val != attrs.Redacted {
					fail("trace %s: %v: %s keeps the value of query parameter %q", tr.TraceID, s, key, k)
				}
			}
		}
	}
}
