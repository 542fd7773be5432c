// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// fixture is a small tree with every attribute type the readers convert,
// and a server span of another service.
func fixture() []tracefixture.Span {
	return []tracefixture.Span{{
		Name: "retry GET", Kind: trace.SpanKindInternal, Start: 0, End: 290 * time.Millisecond,
		Attrs: []attribute.KeyValue{
			attrs.OperationIDKey.String("op-1"),
			attrs.AttemptsKey.Int(1),
			attrs.IdempotencyContractKey.Bool(true),
			attribute.Float64("ratio", 0.25),
			attribute.Int64("big", 1<<62+1), // beyond float64 precision
		},
		Events: []tracefixture.Event{
			{Name: attrs.EventHedgeSent, At: 20 * time.Millisecond, Attrs: []attribute.KeyValue{
				attrs.AttemptKey.Int(2), attrs.HedgeOfKey.Int(1), attrs.HedgeDelayMsKey.Int(20)}},
			{Name: "no attributes", At: 30 * time.Millisecond},
		},
		Children: []tracefixture.Span{{
			Name: "attempt", Start: time.Millisecond, End: 51 * time.Millisecond,
			Attrs: []attribute.KeyValue{attrs.AttemptKey.Int(1), attrs.HTTPResponseStatusCodeKey.Int(200)},
			Children: []tracefixture.Span{{
				Name: "HTTP GET", Kind: trace.SpanKindClient, Start: 2 * time.Millisecond, End: 50 * time.Millisecond,
				Attrs: []attribute.KeyValue{attrs.URLFullKey.String("http://127.0.0.1/x")},
				Children: []tracefixture.Span{{
					Name: "GET /x", Kind: trace.SpanKindServer, Start: 3 * time.Millisecond, End: 49 * time.Millisecond,
					Service: "the-server",
				}},
			}},
		}},
	}}
}

// expected converts the SDK's spans into what every reader must produce
// (attributes of types outside the contract are compared by presence).
func expected(ro []sdktrace.ReadOnlySpan) map[string]model.Span {
	out := map[string]model.Span{}
	for _, s := range ro {
		m := model.Span{
			TraceID: s.SpanContext().TraceID().String(),
			SpanID:  s.SpanContext().SpanID().String(),
			Name:    s.Name(),
			Kind:    model.Kind(s.SpanKind()),
			Start:   s.StartTime().UTC(),
			End:     s.EndTime().UTC(),
		}
		if s.Parent().SpanID().IsValid() {
			m.ParentID = s.Parent().SpanID().String()
		}
		if v, ok := s.Resource().Set().Value(semconv.ServiceNameKey); ok {
			m.Service = v.AsString()
		}
		m.Attributes = expectedAttributes(s.Attributes())
		for _, e := range s.Events() {
			m.Events = append(m.Events, model.Event{Name: e.Name, Time: e.Time.UTC(), Attributes: expectedAttributes(e.Attributes)})
		}
		out[m.SpanID] = m
	}
	return out
}

func expectedAttributes(kvs []attribute.KeyValue) []model.Attribute {
	var out []model.Attribute
	for _, kv := range kvs {
		var v model.Value
		switch kv.Value.Type() {
		case attribute.BOOL:
			v = model.Bool(kv.Value.AsBool())
		case attribute.INT64:
			v = model.Int(kv.Value.AsInt64())
		case attribute.FLOAT64:
			v = model.Float(kv.Value.AsFloat64())
		default:
			v = model.String(kv.Value.AsString())
		}
		out = append(out, model.Attribute{Key: string(kv.Key), Value: v})
	}
	return out
}

func checkSpans(t *testing.T, got []model.Span, want map[string]model.Span) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d spans, want %d", len(got), len(want))
	}
	for _, g := range got {
		w, ok := want[g.SpanID]
		if !ok {
			t.Errorf("unexpected span %s", g.SpanID)
			continue
		}
		g.Start, g.End = g.Start.UTC(), g.End.UTC()
		for i := range g.Events {
			g.Events[i].Time = g.Events[i].Time.UTC()
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("span %s:\n got %+v\nwant %+v", g.SpanID, g, w)
		}
	}
}

// TestStdoutRealExporter parses what stdouttrace v1.47.0 itself writes,
// compact and pretty-printed.
func TestStdoutRealExporter(t *testing.T) {
	want := expected(tracefixture.Record(fixture()...))
	for _, pretty := range []bool{false, true} {
		var buf bytes.Buffer
		if err := tracefixture.WriteStdout(&buf, pretty, fixture()...); err != nil {
			t.Fatal(err)
		}
		if pretty != bytes.Contains(buf.Bytes(), []byte("\n\t")) {
			t.Fatalf("pretty=%v but the output is not as expected:\n%s", pretty, buf.Bytes())
		}
		got, err := Stdout(&buf, "spans.json", 0)
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, got, want)
	}
}

// TestOTLPAndJaegerEncodings reads spans that the SDK's OTLP exporter
// encoded and pdata wrote as JSON, as a file exporter line and as a Jaeger
// /api/v3 answer.
func TestOTLPAndJaegerEncodings(t *testing.T) {
	want := expected(tracefixture.Record(fixture()...))

	var otlp bytes.Buffer
	if err := tracefixture.WriteOTLP(&otlp, fixture()...); err != nil {
		t.Fatal(err)
	}
	got, err := OTLP(&otlp, "spans.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, got, want)

	var jaeger bytes.Buffer
	if err := tracefixture.WriteJaeger(&jaeger, fixture()...); err != nil {
		t.Fatal(err)
	}
	got, err = Jaeger(&jaeger, "jaeger", 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, got, want)
}

func attr(t *testing.T, s model.Span, key string) model.Value {
	t.Helper()
	v, ok := s.Attr(key)
	if !ok {
		t.Fatalf("span %s has no %s", s.SpanID, key)
	}
	return v
}

// TestOTLPVariants reads a file with the variants OTLP JSON allows (kind by
// name, integers as numbers, NaN as a string).
func TestOTLPVariants(t *testing.T) {
	f, err := os.Open("testdata/otlp-variants.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := OTLP(f, "otlp-variants.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	op, att, client := spans[0], spans[1], spans[2]
	if op.TraceID != "5b8efff798038103d269b633813fc60c" || op.ParentID != "" || op.Kind != model.KindInternal {
		t.Errorf("operation span: %+v", op)
	}
	if want := time.Unix(0, 1767323045290000000).UTC(); !op.End.Equal(want) {
		t.Errorf("end %v, want %v", op.End, want)
	}
	if v := attr(t, op, string(attrs.LegacyBudgetMsKey)); v != model.Int(400) {
		t.Errorf("budget %+v", v)
	}
	if v := attr(t, op, string(attrs.IdempotencyContractKey)); v != model.Bool(false) {
		t.Errorf("contract %+v", v)
	}
	if att.ParentID != op.SpanID || attr(t, att, string(attrs.HTTPResponseStatusCodeKey)) != model.Int(200) {
		t.Errorf("attempt span: %+v", att)
	}
	if client.Kind != model.KindClient || client.ParentID != att.SpanID {
		t.Errorf("client span: %+v", client)
	}
	if !client.Start.Equal(time.Unix(0, 1767323045000100000)) {
		t.Errorf("client start %v", client.Start)
	}
	if v := attr(t, client, "sampling.ratio"); v != model.Float(0.5) {
		t.Errorf("double %+v", v)
	}
	if v := attr(t, client, "tags"); v.Type != model.TypeOther {
		t.Errorf("array %+v", v)
	}
	if v := attr(t, client, "nan"); v.Type != model.TypeFloat || !math.IsNaN(v.Float) {
		t.Errorf("NaN %+v", v)
	}
}

// captureEnv reads testdata/capture.env, which capture.sh writes.
func captureEnv(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/capture.env")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = v
		}
	}
	return env
}

func readFileWith(t *testing.T, path string, read func(*os.File) ([]model.Span, error)) []model.Span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

// TestRealCaptures reads what a real Collector's file exporter and a real
// Jaeger's /api/v3 answered for the same run of the demo (see
// testdata/README.md): both must give the same spans, as many as
// capture.sh counted, with the demo's service name.
func TestRealCaptures(t *testing.T) {
	env := captureEnv(t)
	collector := readFileWith(t, "testdata/collector-demo.jsonl", func(f *os.File) ([]model.Span, error) { return OTLP(f, f.Name(), 0) })
	search := readFileWith(t, "testdata/jaeger-search.json", func(f *os.File) ([]model.Span, error) { return Jaeger(f, f.Name(), 0) })
	one := readFileWith(t, "testdata/jaeger-trace.json", func(f *os.File) ([]model.Span, error) { return Jaeger(f, f.Name(), 0) })
	none := readFileWith(t, "testdata/jaeger-not-found.json", func(f *os.File) ([]model.Span, error) { return Jaeger(f, f.Name(), 0) })

	if got := strconv.Itoa(len(collector)); got != env["spans"] {
		t.Errorf("collector file: %s spans, capture.env says %s", got, env["spans"])
	}
	bySpan := map[string]model.Span{}
	traces := map[string]bool{}
	for _, s := range collector {
		bySpan[s.TraceID+s.SpanID] = s
		traces[s.TraceID] = true
	}
	if got := strconv.Itoa(len(traces)); got != env["traces"] {
		t.Errorf("collector file: %s traces, capture.env says %s", got, env["traces"])
	}
	if len(search) != len(collector) {
		t.Fatalf("jaeger search: %d spans, collector file %d", len(search), len(collector))
	}
	for _, s := range search {
		c, ok := bySpan[s.TraceID+s.SpanID]
		if !ok {
			t.Errorf("jaeger span %s/%s is not in the collector file", s.TraceID, s.SpanID)
			continue
		}
		if !reflect.DeepEqual(normalized(s), normalized(c)) {
			t.Errorf("span %s differs:\n jaeger    %+v\n collector %+v", s.SpanID, s, c)
		}
	}
	for _, s := range one {
		if s.TraceID != env["largest_trace"] {
			t.Errorf("jaeger-trace.json holds a span of trace %s, want only %s", s.TraceID, env["largest_trace"])
		}
	}
	if len(one) == 0 {
		t.Error("jaeger-trace.json holds no span")
	}
	if len(none) != 0 {
		t.Errorf("jaeger-not-found.json: %d spans, want none", len(none))
	}
	// The capture is the demo's traffic: retry attempts, recognized by
	// their attributes.
	attempts := 0
	for _, s := range collector {
		if s.Has(string(attrs.AttemptKey)) {
			attempts++
			if !s.Has(string(attrs.OperationIDKey)) || !s.Has(string(attrs.DecisionKey)) {
				t.Errorf("attempt span %s lacks the attempt event: %+v", s.SpanID, s.Attributes)
			}
		}
	}
	if attempts == 0 {
		t.Error("no attempt span in the capture")
	}
}

// normalized sorts a span's attributes and its events', which a backend
// may reorder (Jaeger v1.75's /api/v3 sorts an event's).
func normalized(s model.Span) model.Span {
	byKey := func(a, b model.Attribute) int { return strings.Compare(a.Key, b.Key) }
	s.Attributes = slices.SortedFunc(slices.Values(s.Attributes), byKey)
	s.Events = slices.Clone(s.Events)
	for i := range s.Events {
		s.Events[i].Attributes = slices.SortedFunc(slices.Values(s.Events[i].Attributes), byKey)
	}
	return s
}

// listen starts an HTTP server on 127.0.0.1.
func listen(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchJaegerSearch(t *testing.T) {
	body, err := os.ReadFile("testdata/jaeger-search.json")
	if err != nil {
		t.Fatal(err)
	}
	var got *http.Request
	srv := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write(body)
	}))
	now := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
	q := JaegerQuery{Endpoint: srv.URL + "/", Service: "demo", Lookback: time.Hour, Limit: 20}
	spans, err := FetchJaeger(context.Background(), &http.Client{Timeout: 5 * time.Second}, q, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/api/v3/traces" {
		t.Errorf("path %q", got.URL.Path)
	}
	for k, v := range map[string]string{
		"query.service_name":   "demo",
		"query.start_time_min": "2026-01-02T03:00:00Z",
		"query.start_time_max": "2026-01-02T04:00:00Z",
		"query.num_traces":     "20",
	} {
		if g := got.URL.Query().Get(k); g != v {
			t.Errorf("query %s=%q, want %q", k, g, v)
		}
	}
	if len(spans) == 0 {
		t.Fatal("no spans")
	}

	// Without a limit, the default is sent: /api/v3 has none of its own.
	q.Limit = 0
	if _, err := FetchJaeger(context.Background(), &http.Client{Timeout: 5 * time.Second}, q, now); err != nil {
		t.Fatal(err)
	}
	if g := got.URL.Query().Get("query.num_traces"); g != strconv.Itoa(DefaultLimit) {
		t.Errorf("query.num_traces=%q without a limit, want %d", g, DefaultLimit)
	}
}

func TestFetchJaegerTrace(t *testing.T) {
	body, err := os.ReadFile("testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var path string
	srv := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Write(body)
	}))
	q := JaegerQuery{Endpoint: srv.URL, TraceID: "abc123"}
	spans, err := FetchJaeger(context.Background(), &http.Client{Timeout: time.Second}, q, time.Now())
	if err != nil || len(spans) == 0 {
		t.Fatal(len(spans), err)
	}
	if path != "/api/v3/traces/abc123" {
		t.Errorf("path %q", path)
	}
}

// endless writes body's first part, then pads forever, until the client
// goes away or ten seconds have passed.
func endless(prefix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(prefix))
		pad := bytes.Repeat([]byte(" "), 64<<10)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if _, err := w.Write(pad); err != nil || r.Context().Err() != nil {
				return
			}
		}
	}
}

func TestFetchJaegerErrors(t *testing.T) {
	notFound, err := os.ReadFile("testdata/jaeger-not-found.json")
	if err != nil {
		t.Fatal(err)
	}
	noTraces := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, string(notFound), http.StatusNotFound)
	}))
	notJaeger := listen(t, http.NotFoundHandler())
	depth := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}`, http.StatusInternalServerError)
	}))
	broken := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream storage down", http.StatusBadGateway)
	}))
	slow := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	garbage := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{\"result\": {\"resourceSpans\": [\n  {\"scopeSpans\": 7}\n]}}"))
	}))
	v1 := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[],"total":0,"limit":0,"offset":0,"errors":null}`))
	}))
	huge := listen(t, endless(`{"result":{"resourceSpans":[`))
	// Closed last: a port freed before the others listen may be one of
	// theirs (the endless one's: "did not finish its answer").
	closed := listen(t, http.NotFoundHandler())
	closed.Close()

	for _, tc := range []struct {
		name, endpoint string
		timeout        time.Duration
		maxBytes       int64
		want           string
	}{
		{"unreachable", closed.URL, time.Second, 0, "cannot reach jaeger at " + closed.URL},
		{"not found plain", notJaeger.URL, time.Second, 0, "answered 404 Not Found: \"404 page not found\" (no /api/v3/traces there"},
		{"jaeger error", depth.URL, time.Second, 0, `answered 500 Internal Server Error: "search depth must be greater than 0 and less than max traces" (HTTP 500)`},
		{"plain error", broken.URL, time.Second, 0, `answered 502 Bad Gateway: "upstream storage down"`},
		{"timeout", slow.URL, 50 * time.Millisecond, 0, "did not answer within 50ms"},
		{"malformed", garbage.URL, time.Second, 0, `/api/v3/traces:2:18: result.resourceSpans[0].scopeSpans: ReadArray`},
		{"v1 API", v1.URL, time.Second, 0, "no result (is this the /api/traces JSON?"},
		{"endless body", huge.URL, 30 * time.Second, 1 << 20, "/api/v3/traces: larger than the limit of 1MiB"},
		{"not a URL", "127.0.0.1:16686", time.Second, 0, "want an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := JaegerQuery{Endpoint: tc.endpoint, Service: "demo", Lookback: time.Hour, MaxBytes: tc.maxBytes}
			_, err := FetchJaeger(context.Background(), &http.Client{Timeout: tc.timeout}, q, time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}

	// No traces: Jaeger's 404 with its error object is an empty answer.
	spans, err := FetchJaeger(context.Background(), &http.Client{Timeout: time.Second},
		JaegerQuery{Endpoint: noTraces.URL, Service: "demo", Lookback: time.Hour}, time.Now())
	if err != nil || len(spans) != 0 {
		t.Errorf("no traces: %d spans, %v", len(spans), err)
	}
}

// TestJaegerErrorsHideCredentials checks that no message repeats the
// password or the query of the -jaeger URL: connection, status, decode
// and size errors alike.
func TestJaegerErrorsHideCredentials(t *testing.T) {
	status := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	garbage := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"result": 7}`))
	}))
	huge := listen(t, endless(`{"result":`))
	slow := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	closed := listen(t, http.NotFoundHandler()) // last, as above
	closed.Close()
	for _, srv := range []*httptest.Server{closed, status, garbage, huge, slow} {
		endpoint := strings.Replace(srv.URL, "://", "://alice:s3cret-pw@", 1) + "/?token=tok-secret"
		q := JaegerQuery{Endpoint: endpoint, Service: "demo", Lookback: time.Hour, MaxBytes: 1 << 20}
		_, err := FetchJaeger(context.Background(), &http.Client{Timeout: 200 * time.Millisecond}, q, time.Now())
		if err == nil {
			t.Fatalf("%s: no error", srv.URL)
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cret-pw") || strings.Contains(msg, "tok-secret") {
			t.Errorf("error repeats a secret: %s", msg)
		}
		if strings.Contains(msg, "alice") || !strings.Contains(msg, "REDACTED:REDACTED@") {
			t.Errorf("error does not name the endpoint with its userinfo masked: %s", msg)
		}
	}
	// A URL that does not parse is not repeated at all.
	_, err := JaegerQuery{Endpoint: "http://alice:s3cret-pw@[::1", Service: "demo"}.URL(time.Now())
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("unparsable endpoint: %v", err)
	}
}

// TestMalformed checks that every reader reports where the input breaks,
// down to the field of the span that OTLP's decoder refused.
func TestMalformed(t *testing.T) {
	stdout := func(r *bytes.Reader) error { _, err := Stdout(r, "in", 0); return err }
	otlp := func(r *bytes.Reader) error { _, err := OTLP(r, "in", 0); return err }
	jaeger := func(r *bytes.Reader) error { _, err := Jaeger(r, "in", 0); return err }
	const (
		span  = `{"Name":"a","SpanContext":{"TraceID":"01","SpanID":"02"},"Parent":{},"SpanKind":1}`
		tid   = `"traceId":"0102030405060708090a0b0c0d0e0f10"`
		sid   = `"spanId":"0102030405060708"`
		okSpn = `{` + tid + `,` + sid + `}`
	)
	for _, tc := range []struct {
		name  string
		read  func(*bytes.Reader) error
		input string
		want  string
	}{
		{"stdout syntax", stdout, span + "\n" + span + "\n{\"Name\": ]", "in:3:10: invalid character ']'"},
		{"stdout truncated", stdout, span + "\n{\"Name\":", "in:2:9: unexpected end of input"},
		{"stdout type", stdout, span + "\n{\"Name\": 5}", "in:2:10: json: cannot unmarshal number"},
		{"stdout otlp given", stdout, `{"resourceSpans":[]}`, "in:1:1: not a stdouttrace span: no SpanContext (is this OTLP JSON? give -format otlp)"},
		{"stdout bad id", stdout, span + "\n" + strings.Replace(span, `"01"`, `"xyz"`, 1), `in:2:38: SpanContext.TraceID: invalid trace id "xyz"`},
		{"stdout bad value", stdout, `{"SpanContext":{"TraceID":"01","SpanID":"02"},"Attributes":[{"Key":"k","Value":{"Type":"INT64","Value":"x"}}]}`, `in:1:61: Attributes[0] ("k"):`},
		{"otlp stdout given", otlp, span, "in:1:1: not an OTLP trace request: no resourceSpans"},
		{"otlp not an object", otlp, `[1, 2]`, "in:1:1: not an OTLP trace request: want a JSON object"},
		{"otlp bad id", otlp, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n" + okSpn + ",\n  {\"traceId\":\"AAE=\"," + sid + "}]}]}]}",
			`in:3:14: resourceSpans[0].scopeSpans[0].spans[1].traceId: ID.UnmarshalJSONIter: length mismatch`},
		{"otlp empty id", otlp, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"0102030405060708"}]}]}]}`,
			`in:1:44: resourceSpans[0].scopeSpans[0].spans[0]: traceId: missing or all-zero trace id`},
		{"otlp bad kind", otlp, `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + tid + `,` + sid + `,"kind":"SIDEWAYS"}]}]}]}`,
			`spans[0].kind: ReadEnumValue: unknown string value`},
		{"otlp bad time", otlp, "\n\n" + `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + tid + `,` + sid + `,"startTimeUnixNano":"soon"}]}]}]}`,
			`in:3:138: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: ReadUint64`},
		{"otlp error quotes no input", otlp, `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + tid + `,` + sid + `,"name":"password=hunter2","kind":"X"}]}]}]}`,
			"spans[0].kind: ReadEnumValue: unknown string value"},
		{"jaeger not an object", jaeger, `[1, 2]`, "in:1:1: not a Jaeger /api/v3 answer"},
		{"jaeger error", jaeger, `{"error":{"httpCode":500,"message":"boom"}}`, `in:1:1: jaeger reports: "boom" (HTTP 500)`},
		{"jaeger bad span", jaeger, `{"result":{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01"}]}]}]}}`,
			`in:1:65: result.resourceSpans[0].scopeSpans[0].spans[0].traceId: ID.UnmarshalJSONIter: length mismatch`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(bytes.NewReader([]byte(tc.input)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "bigger context") {
				t.Errorf("error quotes the input: %v", err)
			}
			var pe *PositionError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *PositionError", err)
			}
		})
	}
}

// TestTimestamps reads OTLP's unsigned nanoseconds without wrapping (the
// largest is in 2554, which int64 nanoseconds cannot hold) and refuses a
// timestamp that RFC 3339 and the JSON report cannot write.
func TestTimestamps(t *testing.T) {
	in := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",` +
		`"startTimeUnixNano":"18446744073709551615","endTimeUnixNano":"0"}]}]}]}`
	spans, err := OTLP(strings.NewReader(in), "in", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := spans[0].Start; got.Year() != 2554 || !spans[0].End.IsZero() {
		t.Errorf("start %v end %v, want 2554 and unset", got, spans[0].End)
	}
	for _, bad := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		s := model.Span{Start: bad}
		if err := checkSpan(&s, "start", "end"); err == nil || !strings.Contains(err.Error(), "outside years 0 to 9999") {
			t.Errorf("checkSpan(%v) = %v", bad, err)
		}
	}
	if s := (model.Span{Start: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}); checkSpan(&s, "start", "end") != nil {
		t.Error("year 9999 refused")
	}
}

// countingReader counts what is read from it; it never ends.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	clear(p)
	r.n += int64(len(p))
	return len(p), nil
}

// TestSizeLimit checks that every reader stops at its limit on an endless
// input (as /dev/zero is), reading one byte past it and no more.
func TestSizeLimit(t *testing.T) {
	readers := map[string]func(io.Reader) error{
		"stdout": func(r io.Reader) error { _, err := Stdout(r, "in", 1<<20); return err },
		"otlp":   func(r io.Reader) error { _, err := OTLP(r, "in", 1<<20); return err },
		"jaeger": func(r io.Reader) error { _, err := Jaeger(r, "in", 1<<20); return err },
	}
	for name, read := range readers {
		r := &countingReader{}
		err := read(io.LimitReader(r, 1<<30))
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Limit != 1<<20 || err.Error() != "in: larger than the limit of 1MiB" {
			t.Errorf("%s: %v", name, err)
		}
		if r.n > 2<<20 {
			t.Errorf("%s: read %d bytes for a limit of 1MiB", name, r.n)
		}
	}
	if DefaultMaxBytes != 64<<20 {
		t.Errorf("DefaultMaxBytes = %d; doc.go and the usage say 64MiB", DefaultMaxBytes)
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[string]int64{"1000": 1000, "1000B": 1000, "512KiB": 512 << 10, "64MiB": 64 << 20, "2GiB": 2 << 30} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "1MB", "x", "9999999999GiB"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	for n, want := range map[int64]string{64 << 20: "64MiB", 1 << 30: "1GiB", 1000: "1000B", 1536: "3KiB" /* 1.5KiB is not whole */} {
		if n == 1536 {
			want = "1536B"
		}
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestEmptyInputs(t *testing.T) {
	for name, read := range map[string]func(*bytes.Reader) ([]model.Span, error){
		"stdout": func(r *bytes.Reader) ([]model.Span, error) { return Stdout(r, "in", 0) },
		"otlp":   func(r *bytes.Reader) ([]model.Span, error) { return OTLP(r, "in", 0) },
		"jaeger": func(r *bytes.Reader) ([]model.Span, error) { return Jaeger(r, "in", 0) },
	} {
		spans, err := read(bytes.NewReader([]byte(" \n\n")))
		if err != nil || len(spans) != 0 {
			t.Errorf("%s: %v, %v", name, spans, err)
		}
	}
}

func TestLookback(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		text string
	}{
		{"1h", time.Hour, "1h"},
		{"90m", 90 * time.Minute, "90m"},
		{"2d", 48 * time.Hour, "2d"},
		{"1h30m", 90 * time.Minute, "90m"},
		{"45s", 45 * time.Second, "45s"},
		{"106751d", 106751 * 24 * time.Hour, "106751d"},
		{"2562047h", 2562047 * time.Hour, "2562047h"},
	} {
		got, err := ParseLookback(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLookback(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if s := FormatLookback(got); s != tc.text {
			t.Errorf("FormatLookback(%v) = %q, want %q", got, s, tc.text)
		}
	}
	for _, bad := range []string{"", "0", "-1h", "xd", "1w", "0d", "-5d", "1.5d", "h", "1hh"} {
		if _, err := ParseLookback(bad); err == nil || !strings.Contains(err.Error(), "want a positive duration") {
			t.Errorf("ParseLookback(%q) = %v, want a refusal for its form", bad, err)
		}
	}
	// Too long for a time.Duration: refused as such, never wrapped.
	for _, long := range []string{"106752d", "213504d", "99999999999999999999d", "2562048h", "9999999999999h", "106752d"} {
		if d, err := ParseLookback(long); err == nil || !strings.Contains(err.Error(), "longer than the longest window") {
			t.Errorf("ParseLookback(%q) = %v, %v; want too long", long, d, err)
		}
	}
}

// An OTLP span's flags say whether its parent is remote (bits 0x100 and
// 0x200, as the SDK's exporter and the Collector write them: 769 for a
// server span under a caller's context, 257 for a local parent).
func TestOTLPRemoteParent(t *testing.T) {
	const line = `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","parentSpanId":"eee19b7ec3c1b100","flags":769,"name":"a","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2"},` +
		`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b175","parentSpanId":"eee19b7ec3c1b174","flags":257,"name":"b","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2"},` +
		`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b176","parentSpanId":"eee19b7ec3c1b174","name":"c","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`
	spans, err := OTLP(strings.NewReader(line), "remote.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	var remote []bool
	for _, s := range spans {
		remote = append(remote, s.ParentRemote)
	}
	if want := []bool{true, false, false}; !slices.Equal(remote, want) {
		t.Errorf("ParentRemote of flags 769, 257 and none: %v, want %v", remote, want)
	}
}
