// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// scriptServer is a loopback server that answers the n-th request (from
// 1) with answer(n, w), and keeps what it received.
type scriptServer struct {
	*httptest.Server
	mu       sync.Mutex
	received []*http.Request
	at       []time.Time
}

func newScriptServer(t *testing.T, answer func(n int, w http.ResponseWriter)) *scriptServer {
	s := &scriptServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.received = append(s.received, r.Clone(context.Background()))
		s.at = append(s.at, time.Now())
		n := len(s.received)
		s.mu.Unlock()
		answer(n, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.received...)
}

// gap is the time between the first two requests.
func (s *scriptServer) gap() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.at) < 2 {
		return 0
	}
	return s.at[1].Sub(s.at[0])
}

// answers replies with the statuses and headers given, one per request,
// the last repeated.
func answers(as ...func(w http.ResponseWriter)) func(int, http.ResponseWriter) {
	return func(n int, w http.ResponseWriter) { as[min(n, len(as))-1](w) }
}

func status(code int, kv ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(code)
	}
}

// dialectClient is a client over a fresh otelretry Transport recording its
// spans.
func dialectClient(t *testing.T, opts ...otelretry.Option) (*http.Client, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	opts = append([]otelretry.Option{otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithDeadline(5 * time.Second)}, opts...)
	return &http.Client{Transport: otelretry.NewTransport(base, opts...)}, rec
}

func do(t *testing.T, c *http.Client, method, url string) (*http.Response, error) {
	t.Helper()
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader(`{"sku":1}`)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, url, body)
	resp, err := c.Do(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// Millisecond hints are the server's pushback, read as Retry-After is:
// retry-after-ms and x-ms-retry-after-ms set the pause (and are recorded
// as retry.retry_after_ms), before Retry-After; a 429 that carries one is
// held for its hint by the retry budget, not for the hold of a 429
// without one (a second); a user's own header is read first.
func TestMillisecondHintsAreTheServersPushback(t *testing.T) {
	cases := []struct {
		name  string
		first func(w http.ResponseWriter)
		opts  []otelretry.Option
		want  time.Duration
	}{
		{"503, retry-after-ms", status(503, "Retry-After-Ms", "300"), nil, 300 * time.Millisecond},
		{"503, x-ms-retry-after-ms", status(503, "X-Ms-Retry-After-Ms", "250"), nil, 250 * time.Millisecond},
		{"503, retry-after-ms before Retry-After", status(503, "Retry-After-Ms", "200", "Retry-After", "3"), nil, 200 * time.Millisecond},
		{"429, only retry-after-ms: held for it, not for a second", status(429, "Retry-After-Ms", "150"), nil, 150 * time.Millisecond},
		{"429, Retry-After: 0: no hold", status(429, "Retry-After", "0"), nil, 0},
		{"a header of the user's", status(503, "X-Ratelimit-Reset-Ms", "220", "Retry-After-Ms", "2000"),
			[]otelretry.Option{otelretry.WithRetryHint("x-ratelimit-reset-ms", otelretry.HintMilliseconds)},
			220 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptServer(t, answers(tc.first, status(200)))
			client, rec := dialectClient(t, tc.opts...)
			resp, err := do(t, client, http.MethodGet, srv.URL)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("got %v, %v; want the 200 after the hint", resp, err)
			}
			if n := len(srv.requests()); n != 2 {
				t.Fatalf("the server executed %d calls, want 2", n)
			}
			if gap := srv.gap(); gap < tc.want {
				t.Errorf("the retry came %v after the first call, before the hint of %v", gap, tc.want)
			}
			first := spantest.Attempts(rec.Ended())[0]
			if got := attrOf(first, attrs.RetryAfterMsKey).AsInt64(); got != tc.want.Milliseconds() {
				t.Errorf("retry.retry_after_ms = %d, want %d", got, tc.want.Milliseconds())
			}
			if got := attrOf(first, attrs.BackoffMsKey).AsInt64(); got < tc.want.Milliseconds() {
				t.Errorf("retry.backoff_ms = %d, below the hint", got)
			}
		})
	}
}

// A malformed millisecond hint is ignored with an event, and the next hint
// present is read.
func TestMalformedMillisecondHintFallsBack(t *testing.T) {
	srv := newScriptServer(t, answers(status(503, "Retry-After-Ms", "soon", "Retry-After", "0"), status(200)))
	client, rec := dialectClient(t)
	if _, err := do(t, client, http.MethodGet, srv.URL); err != nil {
		t.Fatal(err)
	}
	first := spantest.Attempts(rec.Ended())[0]
	if got := attrOf(first, attrs.RetryAfterMsKey).AsInt64(); got != 0 {
		t.Errorf("retry.retry_after_ms = %d, want Retry-After's 0", got)
	}
	found := false
	for _, e := range first.Events() {
		found = found || e.Name == attrs.EventRetryAfterInvalid
	}
	if !found {
		t.Error("no retry_after_invalid event for the malformed retry-after-ms")
	}
}

// A service's verdict on its answer: "false" stops its retry (reason
// server_no_retry), "true" makes a failed answer of a repeatable request
// retryable (server_retry), and a write's only with WithShouldRetryWrites,
// which records the header as its evidence. A Classifier wins over it,
// the attempt limit still applies; WithShouldRetryHeaders names the
// headers read, in place of the defaults, and with no name turns it off.
func TestShouldRetryHeadersAreTheServicesVerdict(t *testing.T) {
	notRetryable := otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode >= 500 {
			return otelretry.NotRetryable()
		}
		return otelretry.Classification{}
	})
	cases := []struct {
		name     string
		method   string
		first    func(w http.ResponseWriter)
		opts     []otelretry.Option
		calls    int
		decision string // the first attempt's decision/reason
		evidence string // its retry.evidence.name
	}{
		{"a GET 503 that says false", http.MethodGet, status(503, "X-Should-Retry", "false"), nil, 1, "stop/server_no_retry", ""},
		{"Stripe's header", http.MethodGet, status(503, "Stripe-Should-Retry", "FALSE"), nil, 1, "stop/server_no_retry", ""},
		{"a keyed POST 503 that says false", http.MethodPost, status(503, "X-Should-Retry", "false"),
			[]otelretry.Option{otelretry.WithIdempotencyKeyContract()}, 1, "stop/server_no_retry", ""},
		{"a GET 500 that says true", http.MethodGet, status(500, "X-Should-Retry", "true"), nil, 2, "retry/server_retry", ""},
		{"a GET 409 that says true", http.MethodGet, status(409, "Stripe-Should-Retry", "true"), nil, 2, "retry/server_retry", ""},
		{"a POST 503 that says true: not by default", http.MethodPost, status(503, "X-Should-Retry", "true"), nil, 1, "stop/not_idempotent", ""},
		{"a POST 503 that says true, with WithShouldRetryWrites", http.MethodPost, status(503, "X-Should-Retry", "true"),
			[]otelretry.Option{otelretry.WithShouldRetryWrites()}, 2, "retry/server_retry", "X-Should-Retry"},
		{"a classifier wins", http.MethodGet, status(503, "X-Should-Retry", "true"), []otelretry.Option{notRetryable}, 1, "stop/classifier", ""},
		{"turned off", http.MethodGet, status(503, "X-Should-Retry", "false"), []otelretry.Option{otelretry.WithShouldRetryHeaders()}, 2, "retry/retryable_status", ""},
		{"a header of the user's", http.MethodGet, status(503, "X-Retryable", "false"),
			[]otelretry.Option{otelretry.WithShouldRetryHeaders("x-retryable")}, 1, "stop/server_no_retry", ""},
		{"a header of the user's in place of the defaults", http.MethodGet, status(503, "X-Should-Retry", "false"),
			[]otelretry.Option{otelretry.WithShouldRetryHeaders("x-retryable")}, 2, "retry/retryable_status", ""},
		{"the defaults named again, and a header of the user's", http.MethodGet, status(503, "Stripe-Should-Retry", "false"),
			[]otelretry.Option{otelretry.WithShouldRetryHeaders("x-retryable", "Stripe-Should-Retry", "X-Should-Retry")}, 1, "stop/server_no_retry", ""},
		{"not a verdict", http.MethodGet, status(503, "X-Should-Retry", "maybe"), nil, 2, "retry/retryable_status", ""},
		{"no verdict, then the next header's", http.MethodGet, status(503, "Stripe-Should-Retry", "maybe", "X-Should-Retry", "false"), nil, 1, "stop/server_no_retry", ""},
		{"names that are no header names change nothing", http.MethodGet, status(503, "X-Should-Retry", "false"),
			[]otelretry.Option{otelretry.WithShouldRetryHeaders("x should retry", "")}, 1, "stop/server_no_retry", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptServer(t, answers(tc.first, status(200)))
			client, rec := dialectClient(t, tc.opts...)
			var body io.Reader
			if tc.method != http.MethodGet {
				body = strings.NewReader(`{"sku":1}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL, body)
			req.Header.Set("Idempotency-Key", "k-1")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
			if n := len(srv.requests()); n != tc.calls {
				t.Errorf("the server executed %d calls, want %d", n, tc.calls)
			}
			first := spantest.Attempts(rec.Ended())[0]
			if got := attrOf(first, attrs.DecisionKey).AsString() + "/" + attrOf(first, attrs.ReasonKey).AsString(); got != tc.decision {
				t.Errorf("first attempt: %s, want %s", got, tc.decision)
			}
			if got := attrOf(first, attrs.EvidenceNameKey).AsString(); got != tc.evidence {
				t.Errorf("retry.evidence.name = %q, want %q", got, tc.evidence)
			}
		})
	}
}

// "true" never lifts the attempt limit.
func TestShouldRetryKeepsTheAttemptLimit(t *testing.T) {
	srv := newScriptServer(t, answers(status(500, "X-Should-Retry", "true")))
	client, rec := dialectClient(t, otelretry.WithMaxAttempts(2))
	resp, _ := do(t, client, http.MethodGet, srv.URL)
	if resp == nil || resp.StatusCode != 500 || len(srv.requests()) != 2 {
		t.Fatalf("got %v after %d calls; want the 500 after 2", resp, len(srv.requests()))
	}
	last := spantest.Attempts(rec.Ended())[1]
	if got := attrOf(last, attrs.DecisionKey).AsString(); got != "max_attempts" {
		t.Errorf("last attempt: %s, want max_attempts", got)
	}
}

// The attempt header, opt-in, in the convention its name says (in any
// spelling), the attempt's number for any other name: set on every
// attempt before the PrepareAttemptFunc runs (it sees it), never over a header
// the caller set (in any spelling), not recorded, and with no say in the
// policy.
func TestAttemptHeaderOnTheWire(t *testing.T) {
	cases := []struct {
		header string // as given to WithAttemptHeader
		name   string
		want   []string
	}{
		{"amz-sdk-request", "Amz-Sdk-Request", []string{"attempt=1; max=3", "attempt=2; max=3", "attempt=3; max=3"}},
		{"X-Stainless-Retry-Count", "X-Stainless-Retry-Count", []string{"0", "1", "2"}},
		{"grpc-previous-rpc-attempts", "Grpc-Previous-Rpc-Attempts", []string{"0", "1", "2"}},
		{"x-envoy-attempt-count", "X-Envoy-Attempt-Count", []string{"1", "2", "3"}},
		{"X-Attempt", "X-Attempt", []string{"1", "2", "3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptServer(t, answers(status(503), status(503), status(200)))
			var seenByPrepare []string
			client, rec := dialectClient(t, otelretry.WithAttemptHeader(tc.header),
				otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
					seenByPrepare = append(seenByPrepare, r.Header.Get(tc.name))
					return nil
				}))
			if _, err := do(t, client, http.MethodGet, srv.URL); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range srv.requests() {
				got = append(got, strings.Join(r.Header.Values(tc.name), ","))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || strings.Join(seenByPrepare, "|") != strings.Join(tc.want, "|") {
				t.Errorf("on the wire %q, seen by the PrepareAttemptFunc %q; want %q", got, seenByPrepare, tc.want)
			}
			for _, s := range rec.Ended() {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), tc.want[0]) && strings.Contains(strings.ToLower(string(kv.Key)), "header") {
						t.Errorf("%s records the header: %s", s.Name(), kv.Key)
					}
				}
			}
		})
	}
	t.Run("the caller's own, in another spelling", func(t *testing.T) {
		srv := newScriptServer(t, answers(status(200)))
		client, _ := dialectClient(t, otelretry.WithAttemptHeader("X-Stainless-Retry-Count"))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		req.Header["x-stainless-retry-count"] = []string{"7"}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := srv.requests()[0].Header.Values("X-Stainless-Retry-Count"); len(got) != 1 || got[0] != "7" {
			t.Errorf("on the wire %q, want the caller's 7 alone", got)
		}
	})
}

// The attempt header's maximum is the operation's real attempt limit: the
// Transport's, an Intent's MaxAttempts, and 1 under an Intent's NoRetry,
// which allows no second attempt whatever the limits say.
func TestAttemptHeaderMaxIsTheOperationsAttemptLimit(t *testing.T) {
	cases := []struct {
		name   string
		intent otelretry.Intent
		want   []string
	}{
		{"the Transport's limit", otelretry.Intent{}, []string{"attempt=1; max=3", "attempt=2; max=3", "attempt=3; max=3"}},
		{"an Intent's MaxAttempts", otelretry.Intent{MaxAttempts: 5}, []string{"attempt=1; max=5", "attempt=2; max=5", "attempt=3; max=5"}},
		{"an Intent's NoRetry", otelretry.Intent{NoRetry: true}, []string{"attempt=1; max=1"}},
		{"NoRetry with a MaxAttempts", otelretry.Intent{NoRetry: true, MaxAttempts: 5}, []string{"attempt=1; max=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptServer(t, answers(status(503), status(503), status(200)))
			client, _ := dialectClient(t, otelretry.WithAttemptHeader("Amz-Sdk-Request"))
			req, _ := http.NewRequestWithContext(otelretry.WithIntent(t.Context(), tc.intent), http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var got []string
			for _, r := range srv.requests() {
				got = append(got, r.Header.Get("Amz-Sdk-Request"))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("on the wire %q, want %q", got, tc.want)
			}
		})
	}
}

// An idempotency key only recorded (WithRecordedIdempotencyKey): the
// operation span says the key's contract (retry.idempotency_contract), so
// that a layer above that resends it under the same key is known safe, but
// otelretry does not resend the write on a retryable status nor after it
// timed out.
func TestRecordedIdempotencyKeyIsOnlyRecorded(t *testing.T) {
	for _, first := range []struct {
		name     string
		answer   func(w http.ResponseWriter)
		deadline time.Duration
		outcome  attrs.Outcome
	}{
		{"503", status(503), 5 * time.Second, attrs.OutcomeStop},
		{"no answer in time", func(w http.ResponseWriter) { time.Sleep(300 * time.Millisecond) }, 100 * time.Millisecond, attrs.OutcomeCheckState},
	} {
		t.Run(first.name, func(t *testing.T) {
			srv := newScriptServer(t, answers(first.answer, status(200)))
			client, rec := dialectClient(t, otelretry.WithRecordedIdempotencyKey(), otelretry.WithDeadline(first.deadline))
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(`{"sku":1}`))
			req.Header.Set("Idempotency-Key", "k-1")
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if first.outcome == attrs.OutcomeCheckState && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want ErrOutcomeUnknown", err)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("the server executed %d calls, want 1: a recorded key does not make otelretry resend", n)
			}
			op := spantest.Operations(rec.Ended())[0]
			if !attrOf(op, attrs.IdempotencyContractKey).AsBool() {
				t.Error("the operation span does not record the key's contract")
			}
			if got := attrOf(op, attrs.OutcomeKey).AsString(); got != string(first.outcome) {
				t.Errorf("outcome %s, want %s", got, first.outcome)
			}
		})
	}
}

// A write resent on the service's word (WithShouldRetryWrites) records the
// header as its evidence: protocol http, the header's name, and no code,
// which a header has not (an invented 0 reads as HTTP/2's NO_ERROR under
// the same attribute). A NotProcessed classification, which an answer
// ignores, leaves that evidence in place: it took it away, so the resend
// hid the word it rested on.
func TestAShouldRetryHeadersEvidenceIsRecordedWithNoCode(t *testing.T) {
	careless := func(otelretry.Answer) otelretry.Classification { // forgets that NotProcessed is for no response
		return otelretry.NotProcessed(otelretry.Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"})
	}
	for name, classifier := range map[string]otelretry.Option{"no classifier": nil, "a NotProcessed classifier": otelretry.WithClassifier(careless)} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Status: 503, Header: http.Header{"X-Should-Retry": {"true"}}}, {Status: 200}},
					otelretry.WithShouldRetryWrites(), classifier, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", `{"sku":1}`))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				first := h.attempts()[0]
				code, hasCode := spantest.Attr(first, attrs.EvidenceCodeKey)
				if attrOf(first, attrs.ReasonKey).AsString() != string(attrs.ReasonServerRetry) || attrOf(first, attrs.EvidenceProtocolKey).AsString() != "http" ||
					attrOf(first, attrs.EvidenceNameKey).AsString() != "X-Should-Retry" || hasCode {
					t.Errorf("first attempt: reason %s, evidence %s %s, code %s (recorded %v); want server_retry, http X-Should-Retry, no code",
						attrOf(first, attrs.ReasonKey).AsString(), attrOf(first, attrs.EvidenceProtocolKey).AsString(),
						attrOf(first, attrs.EvidenceNameKey).AsString(), code.Emit(), hasCode)
				}
			})
		})
	}
}
