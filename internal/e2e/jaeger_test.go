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
	ServiceName string `json:"serviceName"`
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

func (s *jaegerSpan) kind() string {
	k, _ := s.tags["span.kind"].(string)
	if k == "" {
		return "internal" // Jaeger omits span.kind for INTERNAL spans
	}
	return k
}

func (s *jaegerSpan) has(key string) bool { _, ok := s.tags[key]; return ok }

func (s *jaegerSpan) str(key string) string {
	switch v := s.tags[key].(type) {
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
func (s *jaegerSpan) int(key string) (int64, bool) {
	switch v := s.tags[key].(type) {
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

// fetchTraces returns every trace of service found in the last hour.
func fetchTraces(jaegerURL, service string, limit int) ([]jaegerTrace, error) {
	q := url.Values{}
	q.Set("service", service)
	q.Set("lookback", "1h")
	q.Set("limit", strconv.Itoa(limit))
	body, err := httpGet(jaegerURL + "/api/traces?" + q.Encode())
	if err != nil {
		return nil, err
	}
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
		for j := range r.Data[i].Spans {
			s := &r.Data[i].Spans[j]
			s.tags = make(map[string]any, len(s.Tags))
			for _, tag := range s.Tags {
				s.tags[tag.Key] = tag.Value
			}
		}
	}
	return r.Data, nil
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

// checkTraces compares the traces of one demo run with its summary and
// returns every violation found (empty when all holds).
func checkTraces(traces []jaegerTrace, run demoRun) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	want := map[string]operation{}
	for _, op := range run.summary.Operations {
		want[op.OperationID] = op
	}

	type opTrace struct {
		trace *jaegerTrace
		span  *jaegerSpan
	}
	opSpans := map[string][]opTrace{}       // operation id -> operation spans
	traceOf := map[string]map[string]bool{} // operation id -> trace ids holding its spans
	var totalOpSpans, totalAttemptSpans int
	for i := range traces {
		tr := &traces[i]
		for j := range tr.Spans {
			s := &tr.Spans[j]
			if p, ok := tr.Processes[s.ProcessID]; !ok || p.ServiceName != run.service {
				fail("trace %s: %v has service %q, want %q", tr.TraceID, s, p.ServiceName, run.service)
			}
			checkURLRedacted(tr, s, fail)
			id := s.str("retry.operation.id")
			if id == "" {
				continue
			}
			if traceOf[id] == nil {
				traceOf[id] = map[string]bool{}
			}
			traceOf[id][tr.TraceID] = true
			switch {
			case s.has("retry.attempt"):
				totalAttemptSpans++
			case s.has("retry.outcome"):
				totalOpSpans++
				opSpans[id] = append(opSpans[id], opTrace{tr, s})
			}
			if _, ok := want[id]; !ok {
				fail("trace %s: %v has retry.operation.id %q, which is not in the summary", tr.TraceID, s, id)
			}
		}
	}
	if totalOpSpans != len(want) {
		fail("%d operation spans in Jaeger, %d operations in the summary", totalOpSpans, len(want))
	}
	if n := run.summary.attemptCount(); totalAttemptSpans != n {
		fail("%d attempt spans in Jaeger, %d attempts in the summary", totalAttemptSpans, n)
	}

	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		op := want[id]
		if n := len(traceOf[id]); n != 1 {
			fail("%s: spans in %d traces, want exactly 1", id, n)
		}
		if n := len(opSpans[id]); n != 1 {
			fail("%s: %d operation spans, want exactly 1", id, n)
			continue
		}
		checkOperationTrace(opSpans[id][0].trace, opSpans[id][0].span, op, fail)
	}
	return problems
}

// checkOperationTrace checks one operation's span tree against its summary.
func checkOperationTrace(tr *jaegerTrace, opSpan *jaegerSpan, op operation, fail func(string, ...any)) {
	id := op.OperationID
	children := map[string][]*jaegerSpan{}
	for j := range tr.Spans {
		s := &tr.Spans[j]
		children[s.parent()] = append(children[s.parent()], s)
	}

	// The operation span: INTERNAL, with the operation's attributes.
	if k := opSpan.kind(); k != "internal" {
		fail("%s: operation %v has kind %s, want internal", id, opSpan, k)
	}
	for key, want := range map[string]string{
		"http.request.method": op.Method,
		"retry.outcome":       op.Outcome,
		"retry.attempts":      strconv.Itoa(len(op.Attempts)),
	} {
		if got := opSpan.str(key); got != want {
			fail("%s: operation span %s = %q, want %q", id, key, got, want)
		}
	}
	for _, key := range []string{"url.full", "server.address"} {
		if opSpan.str(key) == "" {
			fail("%s: operation span has no %s", id, key)
		}
	}

	// Its children: the attempt spans, in order, and optionally state_check.
	var attempts, stateChecks []*jaegerSpan
	for _, c := range children[opSpan.SpanID] {
		switch {
		case c.has("retry.attempt"):
			attempts = append(attempts, c)
		case c.OperationName == "state_check":
			stateChecks = append(stateChecks, c)
		default:
			fail("%s: unexpected child %v of the operation span", id, c)
		}
	}
	// A state check is one child span of the operation, not an attempt.
	switch {
	case op.StateCheck == "" && len(stateChecks) > 0:
		fail("%s: %d state_check spans, the summary has no state check", id, len(stateChecks))
	case op.StateCheck != "" && len(stateChecks) != 1:
		fail("%s: %d state_check spans, want 1 (summary: %s)", id, len(stateChecks), op.StateCheck)
	case op.StateCheck != "":
		if got := stateChecks[0].str("retry.state_check.result"); got != op.StateCheck {
			fail("%s: state_check retry.state_check.result = %q, summary %q", id, got, op.StateCheck)
		}
	}
	// Every attempt span of this operation must be a child of the operation span.
	for j := range tr.Spans {
		s := &tr.Spans[j]
		if s.has("retry.attempt") && s.str("retry.operation.id") == id && s.parent() != opSpan.SpanID {
			fail("%s: attempt %v is not a child of the operation span", id, s)
		}
	}
	sort.Slice(attempts, func(i, j int) bool {
		a, _ := attempts[i].int("retry.attempt")
		b, _ := attempts[j].int("retry.attempt")
		return a < b
	})
	if len(attempts) != len(op.Attempts) {
		fail("%s: %d attempt spans under the operation span, %d attempts in the summary", id, len(attempts), len(op.Attempts))
		return
	}
	lastRemaining := int64(-1)
	for i, as := range attempts {
		sa := op.Attempts[i]
		where := fmt.Sprintf("%s attempt %d", id, i+1)
		if n, ok := as.int("retry.attempt"); !ok || n != int64(i+1) {
			fail("%s: retry.attempt = %q", where, as.str("retry.attempt"))
		}
		for key, want := range map[string]string{
			"retry.operation.id":  id,
			"retry.request.id":    sa.RequestID,
			"http.request.method": op.Method,
			"retry.decision":      sa.Decision,
		} {
			if got := as.str(key); got != want {
				fail("%s: %s = %q, want %q", where, key, got, want)
			}
		}
		// status xor error class, matching the summary.
		hasStatus, hasClass := as.has("http.response.status_code"), as.has("retry.error_class")
		if hasStatus == hasClass {
			fail("%s: http.response.status_code present=%v, retry.error_class present=%v: want exactly one", where, hasStatus, hasClass)
		}
		if sa.Status != 0 {
			if got, _ := as.int("http.response.status_code"); got != int64(sa.Status) {
				fail("%s: http.response.status_code = %q, summary status %d", where, as.str("http.response.status_code"), sa.Status)
			}
		} else if got := as.str("retry.error_class"); got != sa.ErrorClass {
			fail("%s: retry.error_class = %q, summary %q", where, got, sa.ErrorClass)
		}
		elapsed, okE := as.int("retry.elapsed_ms")
		remaining, okR := as.int("retry.remaining_ms")
		if !okE || elapsed < 0 {
			fail("%s: retry.elapsed_ms = %q", where, as.str("retry.elapsed_ms"))
		}
		if !okR {
			fail("%s: retry.remaining_ms = %q", where, as.str("retry.remaining_ms"))
		} else {
			if lastRemaining >= 0 && remaining > lastRemaining {
				fail("%s: retry.remaining_ms grew from %d to %d", where, lastRemaining, remaining)
			}
			lastRemaining = remaining
		}
		for _, key := range []string{"retry.retry_after_ms", "retry.backoff_ms"} {
			if as.has(key) {
				if v, ok := as.int(key); !ok || v < 0 {
					fail("%s: %s = %q", where, key, as.str(key))
				}
			}
		}
		if as.has("http.request.resend_count") {
			if v, _ := as.int("http.request.resend_count"); v != int64(i) {
				fail("%s: http.request.resend_count = %q, want %d", where, as.str("http.request.resend_count"), i)
			}
		}

		// Under the attempt: one otelhttp CLIENT span; under it the SERVER span.
		var clients []*jaegerSpan
		for _, c := range children[as.SpanID] {
			if c.kind() == "client" {
				clients = append(clients, c)
			} else {
				fail("%s: unexpected child %v of the attempt span", where, c)
			}
		}
		if len(clients) != 1 {
			fail("%s: %d client spans under the attempt span, want 1", where, len(clients))
			continue
		}
		cs := clients[0]
		if got := cs.str("http.request.method"); got != op.Method {
			fail("%s: client span http.request.method = %q, want %q", where, got, op.Method)
		}
		if sa.Status != 0 {
			if got, _ := cs.int("http.response.status_code"); got != int64(sa.Status) {
				fail("%s: client span status %q, summary %d", where, cs.str("http.response.status_code"), sa.Status)
			}
		}
		if i > 0 && cs.has("http.request.resend_count") {
			if v, _ := cs.int("http.request.resend_count"); v != int64(i) {
				fail("%s: client span http.request.resend_count = %q, want %d", where, cs.str("http.request.resend_count"), i)
			}
		}
		var servers []*jaegerSpan
		for _, c := range children[cs.SpanID] {
			if c.kind() == "server" {
				servers = append(servers, c)
			} else {
				fail("%s: unexpected child %v of the client span", where, c)
			}
		}
		switch {
		case sa.Status != 0 && len(servers) != 1:
			// A response was received: the demo's server handled the request.
			fail("%s: %d server spans under the client span, want 1", where, len(servers))
		case sa.Status == 0 && len(servers) > 1:
			fail("%s: %d server spans under the client span, want at most 1", where, len(servers))
		}
		for _, ss := range servers {
			if sa.Status != 0 {
				if got, _ := ss.int("http.response.status_code"); got != int64(sa.Status) {
					fail("%s: server span status %q, summary %d", where, ss.str("http.response.status_code"), sa.Status)
				}
			}
		}
	}
}

// checkURLRedacted fails for a url.full or url.query whose query values are
// not all REDACTED: query secrets never reach a trace (keys stay).
func checkURLRedacted(tr *jaegerTrace, s *jaegerSpan, fail func(string, ...any)) {
	for _, key := range []string{"url.full", "url.query"} {
		v := s.str(key)
		if v == "" {
			continue
		}
		raw := v
		if key == "url.full" {
			u, err := url.Parse(v)
			if err != nil {
				fail("trace %s: %v has an unparsable %s %q", tr.TraceID, s, key, v)
				continue
			}
			if u.User != nil {
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
				if val != "REDACTED" {
					fail("trace %s: %v: %s keeps the value of query parameter %q", tr.TraceID, s, key, k)
				}
			}
		}
	}
}
