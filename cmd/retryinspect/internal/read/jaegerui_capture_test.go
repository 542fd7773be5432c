// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// TestJaegerUICaptures reads what a real Jaeger answered at /api/traces,
// the API the Jaeger UI reads (jaeger-ui-search.json; jaeger-ui-trace.json,
// the UI's "Trace JSON"), against what it answered at /api/v3 in the same
// run (jaeger-search.json, jaeger-trace.json): every span is the same, but
// for what /api/traces does not hold (times below the microsecond, whether
// a parent was remote). The search holds every kind of span the demo
// makes: operations with their hedge events, attempts, state checks,
// otelhttp's CLIENT spans and the server's.
func TestJaegerUICaptures(t *testing.T) {
	env := captureEnv(t)
	for _, pair := range []struct{ ui, v3 string }{
		{"testdata/jaeger-ui-search.json", "testdata/jaeger-search.json"},
		{"testdata/jaeger-ui-trace.json", "testdata/jaeger-trace.json"},
	} {
		ui := readFileWith(t, pair.ui, func(f *os.File) ([]model.Span, error) { return JaegerSaved(f, f.Name(), 0) })
		v3 := readFileWith(t, pair.v3, func(f *os.File) ([]model.Span, error) { return Jaeger(f, f.Name(), 0) })
		if len(ui) == 0 || len(ui) != len(v3) {
			t.Fatalf("%s: %d spans, %s: %d", pair.ui, len(ui), pair.v3, len(v3))
		}
		byID := map[string]model.Span{}
		for _, s := range v3 {
			byID[s.TraceID+s.SpanID] = s
		}
		events := 0
		for _, s := range ui {
			want, ok := byID[s.TraceID+s.SpanID]
			if !ok {
				t.Errorf("%s: span %s is not in %s", pair.ui, s.SpanID, pair.v3)
				continue
			}
			events += len(s.Events)
			if got, want := normalized(s), normalized(inMicroseconds(want)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: span %s differs:\n /api/traces %+v\n /api/v3     %+v", pair.ui, s.SpanID, got, want)
			}
		}
		t.Logf("%s: %d spans, %d events, as %s", pair.ui, len(ui), events, pair.v3)
	}
	for _, s := range readFileWith(t, "testdata/jaeger-ui-trace.json", func(f *os.File) ([]model.Span, error) { return JaegerSaved(f, f.Name(), 0) }) {
		if s.TraceID != env["largest_trace"] {
			t.Errorf("jaeger-ui-trace.json holds a span of trace %s, want only %s", s.TraceID, env["largest_trace"])
		}
	}
}

// inMicroseconds is s as /api/traces holds it: its start and its duration
// in microseconds (its end their sum), no remote parent.
func inMicroseconds(s model.Span) model.Span {
	start := s.Start.Truncate(time.Microsecond)
	s.Start, s.End = start, start.Add(s.End.Sub(s.Start).Truncate(time.Microsecond))
	s.Events = append([]model.Event(nil), s.Events...)
	for i := range s.Events {
		s.Events[i].Time = s.Events[i].Time.Truncate(time.Microsecond)
	}
	s.ParentRemote = false
	return s
}
