package read

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// fixture is a small tree with every attribute type the readers convert.
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
		Children: []tracefixture.Span{{
			Name: "attempt", Start: time.Millisecond, End: 51 * time.Millisecond,
			Attrs: []attribute.KeyValue{attrs.AttemptKey.Int(1), attrs.HTTPResponseStatusCodeKey.Int(200)},
			Children: []tracefixture.Span{{
				Name: "HTTP GET", Kind: trace.SpanKindClient, Start: 2 * time.Millisecond, End: 50 * time.Millisecond,
				Attrs: []attribute.KeyValue{attrs.URLFullKey.String("http://127.0.0.1/x")},
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
		for _, kv := range s.Attributes() {
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
			m.Attributes = append(m.Attributes, model.Attribute{Key: string(kv.Key), Value: v})
		}
		out[m.SpanID] = m
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
		got, err := Stdout(&buf, "spans.json")
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, got, want)
	}
}

func TestOTLPAndJaegerEncodings(t *testing.T) {
	want := expected(tracefixture.Record(fixture()...))

	var otlp bytes.Buffer
	if err := tracefixture.WriteOTLP(&otlp, fixture()...); err != nil {
		t.Fatal(err)
	}
	got, err := OTLP(&otlp, "spans.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, got, want)

	var jaeger bytes.Buffer
	if err := tracefixture.WriteJaeger(&jaeger, fixture()...); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Jaeger(&jaeger, "jaeger")
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	for i := range got { // Jaeger adds the scope as a tag
		got[i].Attributes = dropAttr(got[i].Attributes, "otel.scope.name")
	}
	checkSpans(t, got, want)
}

func dropAttr(as []model.Attribute, key string) []model.Attribute {
	var out []model.Attribute
	for _, a := range as {
		if a.Key != key {
			out = append(out, a)
		}
	}
	return out
}

func attr(t *testing.T, s model.Span, key string) model.Value {
	t.Helper()
	v, ok := s.Attr(key)
	if !ok {
		t.Fatalf("span %s has no %s", s.SpanID, key)
	}
	return v
}

// TestOTLPCollectorFile reads a file in the shape the Collector's file
// exporter writes, with the variants OTLP JSON allows (kind by name,
// integers as numbers, NaN as a string).
func TestOTLPCollectorFile(t *testing.T) {
	f, err := os.Open("testdata/collector.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := OTLP(f, "collector.jsonl")
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
	spans, warnings, err := FetchJaeger(context.Background(), &http.Client{Timeout: 5 * time.Second}, q, now)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if got.URL.Path != "/api/traces" {
		t.Errorf("path %q", got.URL.Path)
	}
	wantQuery := map[string]string{
		"service": "demo", "lookback": "1h", "limit": "20",
		"start": "1767322800000000", "end": "1767326400000000",
	}
	for k, v := range wantQuery {
		if g := got.URL.Query().Get(k); g != v {
			t.Errorf("query %s=%q, want %q", k, g, v)
		}
	}
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	op, att, client := spans[0], spans[1], spans[2]
	if op.TraceID != "0000000000000000d269b633813fc60c" {
		t.Errorf("trace id %q not padded", op.TraceID)
	}
	if op.Kind != model.KindInternal || op.Has("span.kind") {
		t.Errorf("span.kind not turned into the kind: %+v", op)
	}
	if att.ParentID != op.SpanID || client.ParentID != att.SpanID || client.Kind != model.KindClient {
		t.Errorf("parents or kinds: %+v %+v", att, client)
	}
	if d := client.End.Sub(client.Start); d != 119700*time.Microsecond {
		t.Errorf("duration %v", d)
	}
	if v := attr(t, att, string(attrs.AttemptKey)); v != model.Int(1) {
		t.Errorf("attempt %+v", v)
	}
	if v := attr(t, client, "payload"); v.Type != model.TypeOther {
		t.Errorf("binary %+v", v)
	}
}

func TestFetchJaegerTrace(t *testing.T) {
	var path string
	srv := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Write([]byte(`{"data":[],"errors":null}`))
	}))
	q := JaegerQuery{Endpoint: srv.URL, TraceID: "abc123"}
	spans, _, err := FetchJaeger(context.Background(), &http.Client{Timeout: time.Second}, q, time.Now())
	if err != nil || len(spans) != 0 {
		t.Fatal(spans, err)
	}
	if path != "/api/traces/abc123" {
		t.Errorf("path %q", path)
	}
}

func TestFetchJaegerErrors(t *testing.T) {
	closed := listen(t, http.NotFoundHandler())
	closed.Close()
	notFound := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code":404,"msg":"trace not found"}]}`))
	}))
	broken := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream storage down", http.StatusBadGateway)
	}))
	partial := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":null,"errors":[{"code":500,"msg":"storage timeout"}]}`))
	}))
	slow := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	garbage := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{\"data\": [\n  {\"traceID\": 7}\n]}"))
	}))

	for _, tc := range []struct {
		name, endpoint string
		timeout        time.Duration
		want           string
	}{
		{"unreachable", closed.URL, time.Second, "cannot reach jaeger at " + closed.URL},
		{"not found", notFound.URL, time.Second, "answered 404 Not Found: trace not found (code 404)"},
		{"plain error", broken.URL, time.Second, `answered 502 Bad Gateway: "upstream storage down"`},
		{"errors without data", partial.URL, time.Second, "storage timeout (code 500)"},
		{"timeout", slow.URL, 50 * time.Millisecond, "did not answer within 50ms"},
		{"malformed", garbage.URL, time.Second, ":2:15: json: cannot unmarshal number"},
		{"not a URL", "127.0.0.1:16686", time.Second, "want an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := JaegerQuery{Endpoint: tc.endpoint, Service: "demo", Lookback: time.Hour}
			_, _, err := FetchJaeger(context.Background(), &http.Client{Timeout: tc.timeout}, q, time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestMalformed checks that every reader reports where the input breaks.
func TestMalformed(t *testing.T) {
	stdout := func(r *bytes.Reader) error { _, err := Stdout(r, "in"); return err }
	otlp := func(r *bytes.Reader) error { _, err := OTLP(r, "in"); return err }
	jaeger := func(r *bytes.Reader) error { _, _, err := Jaeger(r, "in"); return err }
	const span = `{"Name":"a","SpanContext":{"TraceID":"01","SpanID":"02"},"Parent":{},"SpanKind":1}`
	for _, tc := range []struct {
		name  string
		read  func(*bytes.Reader) error
		input string
		want  string
	}{
		{"stdout syntax", stdout, span + "\n" + span + "\n{\"Name\": ]", "in:3:10: invalid character ']'"},
		{"stdout truncated", stdout, span + "\n{\"Name\":", "in:2:9: unexpected end of input"},
		{"stdout type", stdout, span + "\n{\"Name\": 5}", "in:2:10: json: cannot unmarshal number"},
		{"stdout otlp given", stdout, `{"resourceSpans":[]}`, "in:1:1: not a stdouttrace span: no SpanContext (is this OTLP JSON? use --otlp)"},
		{"stdout bad id", stdout, span + "\n" + strings.Replace(span, `"01"`, `"xyz"`, 1), `in:2:1: SpanContext.TraceID: invalid trace id "xyz"`},
		{"stdout bad value", stdout, `{"SpanContext":{"TraceID":"01","SpanID":"02"},"Attributes":[{"Key":"k","Value":{"Type":"INT64","Value":"x"}}]}`, "in:1:1: Attributes[0] (k):"},
		{"otlp stdout given", otlp, span, "in:1:1: not an OTLP trace request: no resourceSpans"},
		{"otlp bad id", otlp, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AAE=","spanId":"01"}]}]}]}`, `in:1:1: resourceSpans[0].scopeSpans[0].spans[0]: traceId: invalid trace id "AAE="`},
		{"otlp bad kind", otlp, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"01","kind":"SIDEWAYS"}]}]}]}`, `unknown span kind "SIDEWAYS"`},
		{"otlp bad time", otlp, "\n\n" + `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"01","startTimeUnixNano":"soon"}]}]}]}`, "in:3:1: resourceSpans[0].scopeSpans[0].spans[0]: startTimeUnixNano:"},
		{"jaeger not an object", jaeger, `[1, 2]`, "in:1:1: not a Jaeger API response"},
		{"jaeger bad tag", jaeger, `{"data":[{"spans":[{"traceID":"01","spanID":"02","tags":[{"key":"k","type":"int64","value":"x"}]}]}]}`, "in:1:1: data[0].spans[0]: tags[0] (k):"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(bytes.NewReader([]byte(tc.input)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			var pe *PositionError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *PositionError", err)
			}
		})
	}
}

func TestEmptyInputs(t *testing.T) {
	for name, read := range map[string]func(*bytes.Reader) ([]model.Span, error){
		"stdout": func(r *bytes.Reader) ([]model.Span, error) { return Stdout(r, "in") },
		"otlp":   func(r *bytes.Reader) ([]model.Span, error) { return OTLP(r, "in") },
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
	} {
		got, err := ParseLookback(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLookback(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if s := FormatLookback(got); s != tc.text {
			t.Errorf("FormatLookback(%v) = %q, want %q", got, s, tc.text)
		}
	}
	for _, bad := range []string{"", "0", "-1h", "xd", "1w", "0d"} {
		if _, err := ParseLookback(bad); err == nil {
			t.Errorf("ParseLookback(%q) accepted", bad)
		}
	}
}
