// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An https endpoint is as good as an http one (baseURL: "an http(s) URL").
func TestAnHTTPSEndpointIsTaken(t *testing.T) {
	u, err := JaegerQuery{Endpoint: "https://127.0.0.1:16686", TraceID: "0af7651916cd43dd8448eb211c80319c"}.URL(time.Unix(0, 0))
	if err != nil || !strings.HasPrefix(u, "https://127.0.0.1:16686/api/v3/traces/") {
		t.Fatalf("URL = %q, %v; want the https endpoint taken", u, err)
	}
	if _, err := (VictoriaLogsQuery{Endpoint: "https://127.0.0.1:9428"}).URL(); err != nil {
		t.Fatalf("victorialogs https endpoint refused: %v", err)
	}
}

// baseURL drops the endpoint's fragment, which no query sends.
func TestAnEndpointsFragmentIsDropped(t *testing.T) {
	for _, ep := range []string{"http://127.0.0.1:16686/#frag", "http://127.0.0.1:16686/jaeger?x=1#frag"} {
		u, err := JaegerQuery{Endpoint: ep, Service: "s", Lookback: time.Hour}.URL(time.Unix(0, 0))
		if err != nil || strings.Contains(u, "#") || strings.Contains(u, "frag") {
			t.Errorf("URL(%q) = %q, %v; want no fragment", ep, u, err)
		}
		v, err := VictoriaLogsQuery{Endpoint: ep, Lookback: time.Hour}.URL()
		if err != nil || strings.Contains(v, "frag") {
			t.Errorf("victorialogs URL(%q) = %q, %v; want no fragment", ep, v, err)
		}
	}
}

// A trace id is one path segment, escaped as such.
func TestATraceIDIsOnePathSegment(t *testing.T) {
	u, err := JaegerQuery{Endpoint: "http://127.0.0.1:16686", TraceID: "a/b?c"}.URL(time.Unix(0, 0))
	if err != nil || !strings.Contains(u, "/api/v3/traces/a%2Fb%3Fc?raw_traces=true") {
		t.Fatalf("URL = %q, %v; want the id escaped as one segment", u, err)
	}
}

// A search asks for the traces as stored (query.raw_traces=true), as a
// trace lookup does (raw_traces=true).
func TestASearchAsksForRawTraces(t *testing.T) {
	u, err := JaegerQuery{Endpoint: "http://127.0.0.1:16686", Service: "s", Lookback: time.Hour}.URL(time.Unix(0, 0))
	if err != nil || !strings.Contains(u, "query.raw_traces=true") {
		t.Fatalf("URL = %q, %v; want query.raw_traces=true", u, err)
	}
}

// A window under a millisecond is asked as 1ms, never as _time:0ms.
func TestAShortVictoriaLogsWindowIsOneMillisecond(t *testing.T) {
	q := VictoriaLogsQuery{Endpoint: "http://127.0.0.1:9428", Lookback: time.Microsecond}.LogsQL()
	if !strings.HasPrefix(q, "_time:1ms ") {
		t.Fatalf("LogsQL = %q; want _time:1ms", q)
	}
}

// The excerpt of a body that is no Jaeger answer is short: 200 bytes and "...".
func TestAnExcerptIsShort(t *testing.T) {
	got := excerpt([]byte(strings.Repeat("x", 300)))
	if want := `"` + strings.Repeat("x", 200) + `..."`; got != want {
		t.Fatalf("excerpt = %d bytes %q...; want 200 bytes and ...", len(got), got[:10])
	}
}

// A micro sign (U+00B5) is a unit time.ParseDuration reads, so an overflow
// written with it is "longer than the longest window".
func TestAnOverflowInMicrosecondsIsTooLong(t *testing.T) {
	for _, s := range []string{"99999999999999999999\u00b5s", "99999999999999999999\u03bcs", "99999999999999999999us"} {
		_, err := ParseLookback(s)
		if err == nil || !strings.Contains(err.Error(), "longer than the longest window") {
			t.Errorf("ParseLookback(%q) = %v; want too long", s, err)
		}
	}
}

// A 404 is Jaeger's "no traces found" only when its error object says
// 404 too: a 404 whose error object says another code (a proxy's, a
// storage failure forwarded) is an error, never an empty answer (a
// reviewer's mutant, dropping the error's code, passed every test).
func TestA404WhoseErrorSaysAnotherCodeIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"httpCode":500,"message":"storage unavailable"}}`))
	}))
	defer srv.Close()
	q := JaegerQuery{Endpoint: srv.URL, Service: "s", Lookback: time.Hour, Limit: 10}
	spans, err := FetchJaeger(t.Context(), srv.Client(), q, time.Now())
	if err == nil || !strings.Contains(err.Error(), "storage unavailable") {
		t.Errorf("FetchJaeger = %d spans, %v; want the error object's message as an error", len(spans), err)
	}
}
