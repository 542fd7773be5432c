// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// keyStore is the reference server of the idempotency-key draft
// (draft-ietf-httpapi-idempotency-key-header) that these tests send writes
// to; it is a test's server, not a product API. It stores each answer by
// key, answers 409 while the key's first request is still being processed
// and 422 when the key comes again with another payload (method, path and
// body), replays a stored answer with Stripe's Idempotent-Replayed: true,
// and, when requireKey, answers a write without a key 400. A request with
// no key is applied each time. It keeps what it received and what it
// applied.
type keyStore struct {
	*httptest.Server
	header     string // the key's header: an sf-string ("..."), or a bare value
	requireKey bool
	// fault says what becomes of request n (from 1) once it is applied.
	fault func(n int) keyFault

	mu       sync.Mutex
	entries  map[string]*storedAnswer
	received []*http.Request
	applied  []string // the payload of each write applied, in order
}

// keyFault is what becomes of a request once the server applied it.
type keyFault struct {
	// lose: the answer is stored, then the connection closed unanswered.
	lose bool
	// hold: the answer is stored and sent only after hold; the key is in
	// progress meanwhile.
	hold time.Duration
}

type storedAnswer struct {
	payload string
	done    bool
	status  int
	body    string
}

func newKeyStore(t *testing.T, fault func(n int) keyFault) *keyStore {
	s := &keyStore{header: "Idempotency-Key", fault: fault, entries: map[string]*storedAnswer{}}
	if s.fault == nil {
		s.fault = func(int) keyFault { return keyFault{} }
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// keyOf reads the key a request carries in h: an sf-string unquoted, a
// bare value as it is.
func keyOf(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(v[1 : len(v)-1])
	}
	return v
}

func (s *keyStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.received = append(s.received, r.Clone(context.Background()))
	n := len(s.received)
	s.mu.Unlock()
	payload := r.Method + " " + r.URL.Path + " " + string(body)
	if r.Method == http.MethodGet {
		w.WriteHeader(http.StatusOK)
		return
	}
	raw := r.Header.Values(s.header)
	if len(raw) == 0 {
		if s.requireKey {
			http.Error(w, "missing "+s.header, http.StatusBadRequest)
			return
		}
		s.answer(w, n, payload, nil)
		return
	}
	key := keyOf(raw[0])
	s.mu.Lock()
	e := s.entries[key]
	switch {
	case e != nil && e.payload != payload:
		s.mu.Unlock()
		s.respond(w, n, http.StatusUnprocessableEntity, "key reused with another payload")
		return
	case e != nil && !e.done:
		s.mu.Unlock()
		w.Header().Set("Retry-After-Ms", "100")
		s.respond(w, n, http.StatusConflict, "a request with this key is in progress")
		return
	case e != nil:
		s.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		s.respond(w, n, e.status, e.body)
		return
	}
	e = &storedAnswer{payload: payload}
	s.entries[key] = e
	s.mu.Unlock()
	s.answer(w, n, payload, e)
}

// answer applies request n and answers it (201), storing the answer in e
// when the request has a key, as its fault says.
func (s *keyStore) answer(w http.ResponseWriter, n int, payload string, e *storedAnswer) {
	s.mu.Lock()
	s.applied = append(s.applied, payload)
	order := len(s.applied)
	s.mu.Unlock()
	if hold := s.fault(n).hold; hold > 0 {
		time.Sleep(hold)
	}
	status, body := http.StatusCreated, "order "+strconv.Itoa(order)
	if e != nil {
		s.mu.Lock()
		e.done, e.status, e.body = true, status, body
		s.mu.Unlock()
	}
	s.respond(w, n, status, body)
}

// respond sends request n its answer, or loses it (closes the connection
// unanswered) as its fault says: an answer lost on the way, whether the
// write was applied now or before.
func (s *keyStore) respond(w http.ResponseWriter, n, status int, body string) {
	if s.fault(n).lose {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *keyStore) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.received...)
}

func (s *keyStore) appliedPayloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.applied...)
}

// keysSent is the value of header on each request the server received
// ("" when absent; values of repeated lines joined by "|").
func (s *keyStore) keysSent(header string) []string {
	var out []string
	for _, r := range s.requests() {
		out = append(out, strings.Join(r.Header.Values(header), "|"))
	}
	return out
}

// lostOnce loses the answer of the first request, once applied.
func lostOnce(n int) keyFault { return keyFault{lose: n == 1} }

// keyClient is a client over a fresh otelretry Transport with generated
// keys in the draft's header, recording its spans.
func keyClient(t *testing.T, opts ...otelretry.Option) (*http.Client, *tracetest.SpanRecorder) {
	return dialectClient(t, append([]otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())}, opts...)...)
}

// send sends method to url with body under ctx, and returns the status (0
// on an error), the body and the error.
func send(t *testing.T, c *http.Client, ctx context.Context, method, url, body string, header ...string) (int, string, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

var draftKey = regexp.MustCompile(`^"[0-9a-f]{32}"$`)

// A generated key is the draft's sf-string of 128 random bits, the same on
// every attempt: the answer lost after the write was applied is sent again
// under it, and the server answers with the stored result instead of
// applying the write twice. Without keys, the same fault ends check_state.
func TestGeneratedKeyIsTheSameOnEveryAttempt(t *testing.T) {
	srv := newKeyStore(t, lostOnce)
	client, rec := keyClient(t)
	status, body, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`)
	if err != nil || status != http.StatusCreated || body != "order 1" {
		t.Fatalf("got %d %q, %v; want the stored 201", status, body, err)
	}
	keys := srv.keysSent("Idempotency-Key")
	if len(keys) != 2 || keys[0] != keys[1] || !draftKey.MatchString(keys[0]) {
		t.Fatalf("keys on the wire %q, want the same sf-string of 32 hex digits on both attempts", keys)
	}
	if applied := srv.appliedPayloads(); len(applied) != 1 {
		t.Fatalf("applied %d times, want once", len(applied))
	}
	atts := spantest.Attempts(rec.Ended())
	if len(atts) != 2 {
		t.Fatalf("%d attempts, want 2", len(atts))
	}
	if got := attrOf(atts[0], attrs.ReasonKey).AsString(); got != string(attrs.ReasonRetryableError) {
		t.Errorf("the lost answer's reason = %s, want retryable_error", got)
	}
	if v, ok := spantest.Attr(atts[1], attrs.IdempotencyReplayedKey); !ok || !v.AsBool() {
		t.Errorf("the replayed answer is not recorded as replayed")
	}
	if _, ok := spantest.Attr(atts[0], attrs.IdempotencyReplayedKey); ok {
		t.Errorf("the first attempt is recorded as replayed")
	}
	op := spantest.Operations(rec.Ended())[0]
	if got := attrOf(op, attrs.IdempotencyKeySourceKey).AsString(); got != string(attrs.KeySourceGenerated) || !attrOf(op, attrs.IdempotencyContractKey).AsBool() {
		t.Errorf("operation: key source %q, contract %v; want generated, true", got, attrOf(op, attrs.IdempotencyContractKey).AsBool())
	}

	t.Run("without keys the same fault ends check_state", func(t *testing.T) {
		srv := newKeyStore(t, lostOnce)
		client, _ := dialectClient(t)
		_, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`)
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(srv.requests()) != 1 {
			t.Fatalf("err %v after %d requests, want ErrOutcomeUnknown after 1", err, len(srv.requests()))
		}
	})
	t.Run("keys differ from one operation to the next", func(t *testing.T) {
		srv := newKeyStore(t, nil)
		client, _ := keyClient(t)
		for range 2 {
			if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
				t.Fatal(err)
			}
		}
		if keys := srv.keysSent("Idempotency-Key"); len(keys) != 2 || keys[0] == keys[1] {
			t.Fatalf("keys %q, want two different ones", keys)
		}
	})
}

// A layer above that sends the operation again under the same
// WithOperationID, with the same method and URL, after it did not succeed,
// sends it under the same key: its earlier tries may have been applied.
func TestGeneratedKeyIsReusedByALayerAboveUnderOneOperationID(t *testing.T) {
	srv := newKeyStore(t, func(n int) keyFault { return keyFault{lose: n <= 2} })
	client, rec := keyClient(t, otelretry.WithMaxAttempts(1)) // the layer above retries, not otelretry
	ctx := otelretry.WithOperationID(t.Context(), "job-7")
	var errs []error
	for try := 1; try <= 3; try++ {
		status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`)
		if err == nil && status == http.StatusCreated {
			break
		}
		errs = append(errs, err)
	}
	if len(errs) != 2 {
		t.Fatalf("%d failed tries (%v), want 2, then the stored answer", len(errs), errs)
	}
	keys := srv.keysSent("Idempotency-Key")
	if len(keys) != 3 || keys[0] != keys[1] || keys[1] != keys[2] {
		t.Fatalf("keys %q, want one key across the three tries", keys)
	}
	if n := len(srv.appliedPayloads()); n != 1 {
		t.Fatalf("applied %d times, want once", n)
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if got := attrOf(op, attrs.IdempotencyKeySourceKey).AsString(); got != string(attrs.KeySourceGenerated) {
			t.Errorf("operation %s: key source %q, want generated", op.SpanContext().SpanID(), got)
		}
	}
}

// Any request other than a repeat gets a key of its own: another URL, and
// the same write once the earlier one succeeded, under the same id.
func TestDifferentWritesUnderOneOperationIDNeverShareAKey(t *testing.T) {
	srv := newKeyStore(t, nil)
	client, _ := keyClient(t)
	ctx := otelretry.WithOperationID(t.Context(), "job-8")
	for _, path := range []string{"/orders", "/invoices", "/orders"} {
		if status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+path, `{}`); err != nil || status != http.StatusCreated {
			t.Fatalf("POST %s: %d, %v", path, status, err)
		}
	}
	if status, _, err := send(t, client, ctx, http.MethodPut, srv.URL+"/orders", `{}`); err != nil || status != http.StatusCreated {
		t.Fatalf("PUT: %d, %v", status, err)
	}
	keys := srv.keysSent("Idempotency-Key")
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] || k == "" {
			t.Fatalf("keys %q: a key shared by two writes, or missing", keys)
		}
		seen[k] = true
	}
	if n := len(srv.appliedPayloads()); n != 4 {
		t.Fatalf("applied %d writes, want 4", n)
	}
}

// Two different writes to one URL under one id (a job's two orders) never
// share a key, whether the first was refused (a 400: before, its key was
// kept for any later POST to the URL, which went out under it and was
// refused 422, the second order never created) or its answer was lost.
// The refused one sent again is its repeat, under its key.
func TestAJobsTwoOrdersToOneURLNeverShareAKey(t *testing.T) {
	t.Run("the first refused", func(t *testing.T) {
		var mu sync.Mutex
		byKey := map[string]string{} // key -> the payload first sent under it
		created := map[string]bool{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			key := r.Header.Get("Idempotency-Key")
			mu.Lock()
			defer mu.Unlock()
			if prev, ok := byKey[key]; ok && prev != string(b) {
				w.WriteHeader(http.StatusUnprocessableEntity) // the draft: the key reused with another payload
				return
			}
			byKey[key] = string(b)
			if string(b) == "item-1" {
				w.WriteHeader(http.StatusBadRequest) // item 1 is invalid
				return
			}
			created[string(b)] = true
			w.WriteHeader(http.StatusCreated)
		}))
		defer srv.Close()
		client, _ := keyClient(t)
		ctx := otelretry.WithOperationID(t.Context(), "import-job-7")
		for _, item := range []string{"item-1", "item-2", "item-1"} {
			if _, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", item); err != nil {
				t.Fatalf("%s: %v", item, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(byKey) != 2 {
			t.Errorf("item-1, item-2 and item-1 again went out under %d distinct keys, want 2", len(byKey))
		}
		if !created["item-2"] {
			t.Errorf("item-2 was never created: it was sent under item-1's key")
		}
	})
	t.Run("the first's answer lost", func(t *testing.T) {
		srv := newKeyStore(t, lostOnce)
		client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
		ctx := otelretry.WithOperationID(t.Context(), "import-job-8")
		if _, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("the first order: %v, want its outcome unknown", err)
		}
		if status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"B2"}`); err != nil || status != http.StatusCreated {
			t.Fatalf("the second order: %d, %v; want it created", status, err)
		}
		if keys := srv.keysSent("Idempotency-Key"); len(keys) != 2 || keys[0] == keys[1] {
			t.Errorf("keys %q, want one per order", keys)
		}
	})
}

// A repeat's body is told from the bytes the first attempt sends, never
// from a GetBody copy read before it: a GetBody that rewinds the body's own
// reader (go-retryablehttp's for an io.ReadSeeker, azcore's) would leave
// the first attempt empty, and a slow one would hold the operation past its
// deadline. (A first fix read the copy: the file's POST went out empty,
// and a 300ms operation waited 4s.)
func TestARepeatsBodyIsToldWithoutReadingGetBody(t *testing.T) {
	const payload = `{"sku":"A1","qty":3}`
	srv := newKeyStore(t, nil)
	client, _ := keyClient(t)
	ctx := otelretry.WithOperationID(t.Context(), "import-job-9")
	t.Run("a GetBody that rewinds the body", func(t *testing.T) {
		f, err := os.Create(filepath.Join(t.TempDir(), "order.json"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		io.WriteString(f, payload)
		f.Seek(0, io.SeekStart)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", io.NopCloser(f))
		req.ContentLength = int64(len(payload))
		req.GetBody = func() (io.ReadCloser, error) {
			_, err := f.Seek(0, io.SeekStart)
			return io.NopCloser(f), err
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := srv.appliedPayloads(); len(got) != 1 || !strings.HasSuffix(got[0], payload) {
			t.Fatalf("applied %q, want the payload once", got)
		}
	})
	t.Run("a GetBody slow to read", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/uploads", strings.NewReader(payload))
		var copies atomic.Int32
		req.GetBody = func() (io.ReadCloser, error) {
			copies.Add(1)
			return io.NopCloser(iotest.TimeoutReader(strings.NewReader(payload))), nil
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := copies.Load(); n != 0 {
			t.Errorf("GetBody called %d times for a write answered at once, want never", n)
		}
	})
}

// A key the caller (an SDK, a PrepareAttemptFunc) set is kept, never replaced,
// and relied on as the generated one is; one in a header otelretry knows
// for a key but the user did not declare (X-Idempotency-Key) is kept, and
// no second key is added.
func TestCallersKeyIsNeverReplaced(t *testing.T) {
	t.Run("in the generated key's header", func(t *testing.T) {
		srv := newKeyStore(t, lostOnce)
		client, rec := keyClient(t)
		status, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "Idempotency-Key", `"caller-1"`)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("%d, %v", status, err)
		}
		if keys := srv.keysSent("Idempotency-Key"); strings.Join(keys, ",") != `"caller-1","caller-1"` {
			t.Fatalf("keys %q, want the caller's on both attempts", keys)
		}
		if got := attrOf(spantest.Operations(rec.Ended())[0], attrs.IdempotencyKeySourceKey).AsString(); got != string(attrs.KeySourceCaller) {
			t.Errorf("key source %q, want caller", got)
		}
	})
	t.Run("in a header of the user's, bare", func(t *testing.T) {
		srv := newKeyStore(t, lostOnce)
		srv.header = "Paypal-Request-Id"
		client, _ := dialectClient(t, otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "PayPal-Request-Id"}))
		if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "PayPal-Request-Id", "mine"); err != nil {
			t.Fatal(err)
		}
		if keys := srv.keysSent("PayPal-Request-Id"); strings.Join(keys, ",") != "mine,mine" {
			t.Fatalf("keys %q, want the caller's on both attempts", keys)
		}
	})
	t.Run("in a header otelretry knows but the user did not declare", func(t *testing.T) {
		srv := newKeyStore(t, nil)
		client, _ := keyClient(t)
		if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "X-Idempotency-Key", "theirs"); err != nil {
			t.Fatal(err)
		}
		r := srv.requests()[0]
		if r.Header.Get("X-Idempotency-Key") != "theirs" || len(r.Header.Values("Idempotency-Key")) != 0 {
			t.Fatalf("headers %v, want the caller's X-Idempotency-Key alone", r.Header)
		}
	})
}

// A caller's key of blanks reaches the server empty (net/http trims a
// header's value when it writes it), so no server can deduplicate by it:
// the write is unkeyed, under generated keys (the caller's header still
// keeps otelretry's key off) as under a contract, and its lost answer is
// the caller's to check, never resent.
func TestACallersKeyOfBlanksIsNoKey(t *testing.T) {
	for name, opt := range map[string]otelretry.Option{
		"generated keys": otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
		"a contract":     otelretry.WithIdempotencyKeyContract("Idempotency-Key"),
	} {
		for _, blanks := range []string{"   ", "\t", " \t "} {
			t.Run(fmt.Sprintf("%s, %q", name, blanks), func(t *testing.T) {
				srv := newKeyStore(t, lostOnce)
				client, _ := dialectClient(t, opt)
				_, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "Idempotency-Key", blanks)
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("the lost answer ended %v; want ErrOutcomeUnknown", err)
				}
				if keys := srv.keysSent("Idempotency-Key"); len(keys) != 1 || keys[0] != "" {
					t.Errorf("keys sent %q; want one request, its key empty on the wire", keys)
				}
			})
		}
	}
}

// Over HTTP/2, net/http sends a header's value as written (its HTTP/1
// writer alone trims it): a key with blanks around it is judged and
// recorded as written, so the span's retry.idempotency_key.value is what
// the server got, and "k1" beside "k1 " is a conflict, two keys there. (A
// fix that read keys trimmed, for the key of blanks above, recorded "k1"
// and sent both.)
func TestAKeyIsJudgedAndRecordedAsWritten(t *testing.T) {
	var mu sync.Mutex
	var got [][]string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, append(r.Header.Values("Idempotency-Key"), r.Header.Values("X-Idempotency-Key")...))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	rec := tracetest.NewSpanRecorder()
	client := &http.Client{Transport: otelretry.NewTransport(srv.Client().Transport,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithIdempotencyKeyContract("Idempotency-Key", "X-Idempotency-Key"), otelretry.WithIdempotencyKeyValues())}

	status, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "Idempotency-Key", " k1 ")
	recorded := attrOf(spantest.Operations(rec.Ended())[0], attrs.IdempotencyKeyValueKey).AsString()
	if err != nil || status != http.StatusCreated || len(got) != 1 || !slices.Equal(got[0], []string{" k1 "}) || recorded != " k1 " {
		t.Errorf("%d, %v: the server got %q, retry.idempotency_key.value %q; want \" k1 \" both", status, err, got, recorded)
	}
	_, _, err = send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "Idempotency-Key", "k1", "X-Idempotency-Key", "k1 ")
	if !errors.Is(err, otelretry.ErrIdempotencyKeyConflict) || len(got) != 1 {
		t.Errorf("err %v, the server got %q; want ErrIdempotencyKeyConflict, nothing sent", err, got)
	}
}

// No key on a request otelretry does not treat as a write, or on any
// request when the option is off.
func TestNoKeyOnAGetOrWhenTheOptionIsOff(t *testing.T) {
	srv := newKeyStore(t, nil)
	client, _ := keyClient(t)
	if _, _, err := send(t, client, t.Context(), http.MethodGet, srv.URL+"/orders", ""); err != nil {
		t.Fatal(err)
	}
	read := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}) // a query sent as POST
	if _, _, err := send(t, client, read, http.MethodPost, srv.URL+"/search", `{}`); err != nil {
		t.Fatal(err)
	}
	off, _ := dialectClient(t)
	if _, _, err := send(t, off, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.requests() {
		if v := r.Header.Values("Idempotency-Key"); len(v) != 0 {
			t.Errorf("%s %s carries a key %q", r.Method, r.URL.Path, v)
		}
	}
	if n := len(srv.requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// A request that carries two different keys in the contract's headers is
// not sent: no server could tell under which it is repeated.
func TestTwoDifferentKeysStopBeforeTheRequestIsSent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []otelretry.Option
		header []string
	}{
		{"the contract's two headers", []otelretry.Option{otelretry.WithIdempotencyKeyContract()},
			[]string{"Idempotency-Key", "a", "X-Idempotency-Key", "b"}},
		{"two values of one header", []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())},
			[]string{"Idempotency-Key", `"a"`, "Idempotency-Key", `"b"`}},
		{"the generated key's header and the contract's", []otelretry.Option{
			otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "Key"}), otelretry.WithIdempotencyKeyContract()},
			[]string{"Key", "a", "Idempotency-Key", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newKeyStore(t, nil)
			client, rec := dialectClient(t, tc.opts...)
			_, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, tc.header...)
			var oe *otelretry.Error
			if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonKeyConflict || oe.Attempts != 0 ||
				!errors.Is(err, otelretry.ErrIdempotencyKeyConflict) {
				t.Fatalf("err = %v, want stop (key_conflict) with no attempt, matching ErrIdempotencyKeyConflict", err)
			}
			if n := len(srv.requests()); n != 0 {
				t.Fatalf("%d requests sent", n)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.header[0]) || strings.Contains(msg, `"b"`) || strings.Contains(msg, ": b") {
				t.Errorf("message %q: want the headers named, never their values", msg)
			}
			if got := attrOf(spantest.Operations(rec.Ended())[0], attrs.OutcomeKey).AsString(); got != "stop" {
				t.Errorf("outcome recorded %q", got)
			}
		})
	}
	t.Run("the same key twice is one key", func(t *testing.T) {
		srv := newKeyStore(t, nil)
		client, _ := dialectClient(t, otelretry.WithIdempotencyKeyContract())
		if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`,
			"Idempotency-Key", "a", "X-Idempotency-Key", "a"); err != nil {
			t.Fatal(err)
		}
	})
	// The contract's headers are k's and those WithIdempotencyKeyContract
	// names, not every header otelretry knows for a key: under
	// WithIdempotencyKeys alone, an X-Idempotency-Key beside the key is the
	// caller's business, and the request is sent as it is (the godoc said
	// which headers only by a list a reader took for the contract's; a
	// reviewer's find).
	t.Run("a known header outside the contract is no conflict", func(t *testing.T) {
		srv := newKeyStore(t, nil)
		client, _ := dialectClient(t, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
		if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`,
			"Idempotency-Key", `"a"`, "X-Idempotency-Key", "b"); err != nil {
			t.Fatal(err)
		}
		reqs := srv.requests()
		if len(reqs) != 1 || reqs[0].Header.Get("Idempotency-Key") != `"a"` || reqs[0].Header.Get("X-Idempotency-Key") != "b" {
			t.Fatalf("%d requests, want one carrying the caller's two headers as they were", len(reqs))
		}
	})
}

// The draft's answers to a request that carries a key, on the wire: 409
// while its first request is in progress (an answer slower than the
// attempt timeout), retried after the server's hint until the stored
// answer comes; 422 when a layer above reuses the key with another
// payload, which stops and is never resent; 400 as any 400.
func TestDraftAnswersOnTheWire(t *testing.T) {
	t.Run("409: the key in progress", func(t *testing.T) {
		srv := newKeyStore(t, func(n int) keyFault {
			if n == 1 {
				return keyFault{hold: 250 * time.Millisecond} // slower than the attempt timeout
			}
			return keyFault{}
		})
		// Every 409 costs the retry budget a failure, as any retryable
		// answer does: this test is about the answers, not the budget.
		client, rec := keyClient(t, otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithMaxAttempts(8), otelretry.WithoutBudget())
		status, body, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`)
		if err != nil || status != http.StatusCreated || body != "order 1" {
			t.Fatalf("%d %q, %v; want the stored 201", status, body, err)
		}
		if n := len(srv.appliedPayloads()); n != 1 {
			t.Fatalf("applied %d times", n)
		}
		var reasons []string
		for _, a := range spantest.Attempts(rec.Ended()) {
			reasons = append(reasons, attrOf(a, attrs.ReasonKey).AsString())
			if attrOf(a, attrs.HTTPResponseStatusCodeKey).AsInt64() == 409 && attrOf(a, attrs.BackoffMsKey).AsInt64() < 100 {
				t.Errorf("a 409's pause %dms, shorter than the server's hint (100ms)", attrOf(a, attrs.BackoffMsKey).AsInt64())
			}
		}
		if len(reasons) < 3 || reasons[0] != "retryable_error" || reasons[1] != "key_in_progress" || reasons[len(reasons)-1] != "response" {
			t.Fatalf("reasons %q, want a timeout, then key_in_progress until the stored answer", reasons)
		}
	})
	t.Run("422: the key reused with another payload", func(t *testing.T) {
		srv := newKeyStore(t, func(n int) keyFault { return keyFault{lose: n == 1} })
		client, rec := keyClient(t, otelretry.WithMaxAttempts(1))
		ctx := otelretry.WithOperationID(t.Context(), "job-9")
		if _, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`); err == nil {
			t.Fatal("the lost answer came back")
		}
		// A layer above builds the request again, with another payload and
		// the key it read from the first (a generated key is never reused
		// for another body: TestAJobsTwoOrdersToOneURLNeverShareAKey).
		status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"B2"}`,
			"Idempotency-Key", srv.keysSent("Idempotency-Key")[0])
		if err != nil || status != http.StatusUnprocessableEntity {
			t.Fatalf("%d, %v; want the 422 returned", status, err)
		}
		last := spantest.Attempts(rec.Ended())[1]
		if d, r := attrOf(last, attrs.DecisionKey).AsString(), attrOf(last, attrs.ReasonKey).AsString(); d != "stop" || r != "key_reused" {
			t.Fatalf("decision %s (%s), want stop (key_reused)", d, r)
		}
		retry, _ := dialectClient(t, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(5))
		before := len(srv.requests())
		status, _, _ = send(t, retry, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"C3"}`, "Idempotency-Key", srv.keysSent("Idempotency-Key")[0])
		if status != http.StatusUnprocessableEntity || len(srv.requests()) != before+1 {
			t.Fatalf("%d after %d requests; want the 422 after one: never resent", status, len(srv.requests())-before)
		}
	})
	t.Run("400: a key the server requires is missing", func(t *testing.T) {
		srv := newKeyStore(t, nil)
		srv.requireKey = true
		client, rec := dialectClient(t, otelretry.WithIdempotencyKeyContract())
		status, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`)
		if err != nil || status != http.StatusBadRequest || len(srv.requests()) != 1 {
			t.Fatalf("%d, %v after %d requests; want the 400 after one", status, err, len(srv.requests()))
		}
		if r := attrOf(spantest.Attempts(rec.Ended())[0], attrs.ReasonKey).AsString(); r != "status" {
			t.Fatalf("reason %s, want status", r)
		}
	})
}

// The 409's pause is the server's Retry-After where it gives one, counted
// as a retry, on virtual time.
func TestKeyInProgressWaitsForRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusConflict, Header: http.Header{"Retry-After": {"2"}}},
			{Status: http.StatusCreated},
		}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", `{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 || calls[1].At.Sub(calls[0].At) != 2*time.Second {
			t.Fatalf("%d calls, want 2, 2s apart", len(calls))
		}
		if calls[0].Header.Get("Idempotency-Key") == "" || calls[0].Header.Get("Idempotency-Key") != calls[1].Header.Get("Idempotency-Key") {
			t.Fatalf("keys %q, %q", calls[0].Header.Get("Idempotency-Key"), calls[1].Header.Get("Idempotency-Key"))
		}
		if e := h.events(t); e[0].Decision != "retry" || e[0].BackoffMs != 2000 {
			t.Fatalf("first event %+v, want retry after 2000ms", e[0])
		}
		if r := attrOf(h.attempts()[0], attrs.ReasonKey).AsString(); r != string(attrs.ReasonKeyInProgress) {
			t.Fatalf("reason %s", r)
		}
	})
}

// The key is on the attempt's copy before the PrepareAttemptFunc runs, so a
// signature covers it; a PrepareAttemptFunc that changes it ends prepare_failed.
func TestKeyIsSetBeforeThePrepareFunc(t *testing.T) {
	srv := newKeyStore(t, lostOnce)
	var signed []string
	client, _ := keyClient(t, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		signed = append(signed, r.Header.Get("Idempotency-Key"))
		r.Header.Set("X-Signature", "sig("+r.Header.Get("Idempotency-Key")+")")
		return nil
	}))
	if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
		t.Fatal(err)
	}
	keys := srv.keysSent("Idempotency-Key")
	if len(signed) != 2 || signed[0] != keys[0] || signed[1] != keys[1] {
		t.Fatalf("the PrepareAttemptFunc saw %q, the wire carried %q", signed, keys)
	}
	if sig := srv.requests()[1].Header.Get("X-Signature"); sig != "sig("+keys[1]+")" {
		t.Fatalf("signature %q does not cover the key %q", sig, keys[1])
	}

	for _, tc := range []struct {
		name   string
		change func(r *http.Request, n int)
	}{
		{"on the first attempt", func(r *http.Request, _ int) { r.Header.Set("Idempotency-Key", `"mine"`) }},
		{"removed on a later attempt", func(r *http.Request, n int) {
			if n == 2 {
				r.Header.Del("Idempotency-Key")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newKeyStore(t, lostOnce)
			client, _ := keyClient(t, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error { tc.change(r, n); return nil }))
			_, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`)
			var oe *otelretry.Error
			if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonPrepareFailed {
				t.Fatalf("err = %v, want stop (prepare_failed)", err)
			}
			for _, k := range srv.keysSent("Idempotency-Key") {
				if !draftKey.MatchString(k) {
					t.Fatalf("a changed key %q reached the wire", k)
				}
			}
		})
	}
}

// A header of the user's carries the key bare, or as its Value formats it.
func TestKeyInANamedHeader(t *testing.T) {
	for _, tc := range []struct {
		key  otelretry.IdempotencyKey
		want *regexp.Regexp
	}{
		{otelretry.IdempotencyKey{Name: "x-request-key"}, regexp.MustCompile(`^[0-9a-f]{32}$`)},
		{otelretry.IdempotencyKey{Name: "X-Request-Key", Value: func(k string) string { return "ord_" + k }}, regexp.MustCompile(`^ord_[0-9a-f]{32}$`)},
	} {
		srv := newKeyStore(t, lostOnce)
		srv.header = "X-Request-Key"
		client, _ := dialectClient(t, otelretry.WithIdempotencyKeys(tc.key))
		if _, _, err := send(t, client, t.Context(), http.MethodPatch, srv.URL+"/orders/1", `{}`); err != nil {
			t.Fatal(err)
		}
		keys := srv.keysSent("X-Request-Key")
		if len(keys) != 2 || keys[0] != keys[1] || !tc.want.MatchString(keys[0]) {
			t.Fatalf("keys %q, want %s twice", keys, tc.want)
		}
		if v := srv.requests()[0].Header.Values("Idempotency-Key"); len(v) != 0 {
			t.Fatalf("Idempotency-Key %q sent too", v)
		}
	}
}

// Bad input, as every option: a header name that is empty or no header
// name is ignored (no key is sent) and reported once through otel.Handle,
// and so is a Value that gives no header value (the key is sent bare).
func TestBadKeyOptionsAreIgnoredAndReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  otelretry.Option
		// header is the header a key reaches the wire in, "" when none does.
		header string
	}{
		{"an empty key header", otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{}), ""},
		{"a key header with a space", otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "Idempotency Key"}), ""},
		{"a key header with a colon", otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "Key:"}), ""},
		{"a Value with a line break", otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "K", Value: func(k string) string { return k + "\n" }}), "K"},
		{"an empty id header", otelretry.WithOperationIDHeader(""), ""},
		{"an id header with a space", otelretry.WithOperationIDHeader("Operation Id"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := captureOtelErrors(t)
			srv := newKeyStore(t, nil)
			client, _ := dialectClient(t, tc.opt)
			if got := errs(); len(got) != 1 {
				t.Fatalf("reported %d times (%v), want once", len(got), got)
			}
			if _, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
				t.Fatalf("the request path broke: %v", err)
			}
			r := srv.requests()[0]
			if tc.header != "" && len(r.Header.Values(tc.header)) != 1 {
				t.Errorf("no key in %s: %v", tc.header, r.Header)
			}
			for name, v := range r.Header {
				if name == tc.header {
					if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(v[0]) {
						t.Errorf("%s: %q, want the bare key", name, v)
					}
					continue
				}
				if name != "Content-Length" && name != "Content-Type" && name != "Accept-Encoding" && name != "User-Agent" &&
					name != "Traceparent" && name != "Tracestate" && name != "Baggage" {
					t.Errorf("header %s: %q sent", name, v)
				}
			}
			if len(errs()) != 1 {
				t.Errorf("reported again on the request path: %v", errs())
			}
		})
	}
}

// The operation's id on the wire (WithOperationIDHeader): the same on
// every attempt, WithOperationID's when given, never over the caller's.
func TestOperationIDHeaderOnEveryAttempt(t *testing.T) {
	srv := newKeyStore(t, func(n int) keyFault { return keyFault{lose: n == 1} })
	client, rec := keyClient(t, otelretry.WithOperationIDHeader("X-Operation-Id"))
	if _, _, err := send(t, client, otelretry.WithOperationID(t.Context(), "order-42"), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
		t.Fatal(err)
	}
	if ids := srv.keysSent("X-Operation-Id"); strings.Join(ids, ",") != "order-42,order-42" {
		t.Fatalf("ids on the wire %q, want order-42 on both attempts", ids)
	}
	if _, _, err := send(t, client, t.Context(), http.MethodGet, srv.URL+"/orders", ""); err != nil {
		t.Fatal(err)
	}
	generated := srv.keysSent("X-Operation-Id")[2]
	var spanID string
	for _, op := range spantest.Operations(rec.Ended()) {
		if attrOf(op, attrs.HTTPRequestMethodKey).AsString() == http.MethodGet {
			spanID = attrOf(op, attrs.OperationIDKey).AsString()
		}
	}
	if generated == "" || generated != spanID {
		t.Fatalf("a generated id on the wire %q, the span's %q", generated, spanID)
	}
	if _, _, err := send(t, client, t.Context(), http.MethodGet, srv.URL+"/orders", "", "x-operation-id", "theirs"); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests()[3].Header.Values("X-Operation-Id"); strings.Join(got, ",") != "theirs" {
		t.Fatalf("%q, want the caller's alone", got)
	}
}

// An operation id that is no field value (a line break, a space at an end)
// is not sent: net/http would refuse the request, and a write refused so
// would end not_idempotent without reaching the server.
func TestAnOperationIDThatIsNoHeaderValueIsNotSent(t *testing.T) {
	srv := newKeyStore(t, nil)
	client, _ := keyClient(t, otelretry.WithOperationIDHeader("X-Operation-Id"))
	for _, id := range []string{"order\r\n42", "order\x0042", " order-42"} {
		if _, _, err := send(t, client, otelretry.WithOperationID(t.Context(), id), http.MethodPost, srv.URL+"/orders", `{}`); err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
	}
	if n := len(srv.requests()); n != 3 {
		t.Fatalf("the server got %d writes, want 3", n)
	}
	if ids := srv.keysSent("X-Operation-Id"); strings.Join(ids, "") != "" {
		t.Fatalf("ids on the wire %q, want none", ids)
	}
}

// A write under a key is still never hedged: concurrent copies of one key
// are what servers handle worst.
func TestKeyedWritesAreNeverHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 300 * time.Millisecond, Status: http.StatusCreated}},
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond}))
		resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", `{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 1 {
			t.Fatalf("%d calls, want 1: a keyed write hedged", n)
		}
	})
}

// What is recorded of a key, on every channel alike: that one was sent and
// where it came from, on the operation and each attempt (spans, the log
// events, the slog records); its value only with WithIdempotencyKeyValues;
// never on metrics.
func TestKeyRecordedOnEveryChannel(t *testing.T) {
	for _, values := range []bool{false, true} {
		t.Run(fmt.Sprintf("values %v", values), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var slogOut bytes.Buffer
				opts := []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
					otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogOut, nil)))}
				if values {
					opts = append(opts, otelretry.WithIdempotencyKeyValues())
				}
				h, logs := newLogHarness(t, []scripted.Step{
					{Status: http.StatusServiceUnavailable},
					{Status: http.StatusCreated, Header: http.Header{"Idempotent-Replayed": {"true"}}},
				}, opts...)
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", `{}`))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				wire := h.base.Calls()[0].Header.Get("Idempotency-Key")
				check := func(where string, got map[attribute.Key]attribute.Value, replayed bool) {
					t.Helper()
					if got[attrs.IdempotencyKeySourceKey].AsString() != "generated" {
						t.Errorf("%s: key source %q", where, got[attrs.IdempotencyKeySourceKey].AsString())
					}
					v, ok := got[attrs.IdempotencyKeyValueKey]
					if ok != values || (values && v.AsString() != wire) {
						t.Errorf("%s: key value %q (recorded %v), want %v", where, v.AsString(), ok, values)
					}
					if r, ok := got[attrs.IdempotencyReplayedKey]; ok != replayed || (ok && !r.AsBool()) {
						t.Errorf("%s: replayed %v, want %v", where, ok, replayed)
					}
				}
				spanAttrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
					m := map[attribute.Key]attribute.Value{}
					for _, kv := range s.Attributes() {
						m[kv.Key] = kv.Value
					}
					return m
				}
				check("operation span", spanAttrs(h.operation(t)), false)
				check("operation log event", recordAttrs(logs.named(attrs.LogEventOperation)[0]), false)
				for i, a := range h.attempts() {
					check(fmt.Sprintf("attempt span %d", i+1), spanAttrs(a), i == 1)
					check(fmt.Sprintf("attempt log event %d", i+1), recordAttrs(logs.named(attrs.LogEventAttempt)[i]), i == 1)
				}
				lines := strings.Split(strings.TrimSpace(slogOut.String()), "\n")
				if len(lines) != 2 {
					t.Fatalf("%d slog records", len(lines))
				}
				for i, line := range lines {
					if !strings.Contains(line, `"retry.idempotency_key.source":"generated"`) ||
						strings.Contains(line, keyOf(wire)) != values ||
						strings.Contains(line, `"retry.idempotency_key.replayed":true`) != (i == 1) {
						t.Errorf("slog record %d: %s", i+1, line)
					}
				}
				var rm metricdata.ResourceMetrics
				if err := h.reader.Collect(context.Background(), &rm); err != nil {
					t.Fatal(err)
				}
				if m := fmt.Sprintf("%+v", rm); strings.Contains(m, keyOf(wire)) || strings.Contains(m, "idempotency_key") {
					t.Errorf("metrics carry the key or its source")
				}
			})
		})
	}
}

// A keyed write's 409 paces its own key's resends with its Retry-After,
// and holds back no other write's retry: it says one key is busy, not that
// the host is.
func TestKeyInProgressHoldsBackNoOtherRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusConflict, Header: http.Header{"Retry-After": {"5"}}}, // the first write, at 0
			{Status: http.StatusServiceUnavailable},                                  // the second, at 1s
			{Status: http.StatusCreated},                                             // its retry
			{Status: http.StatusCreated},                                             // the first's resend, at 5s
		}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range 2 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Second)
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders/"+strconv.Itoa(i), `{}`))
				if err != nil {
					t.Errorf("write %d: %v", i, err)
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		if statuses[0] != http.StatusCreated || statuses[1] != http.StatusCreated || len(h.base.Calls()) != 4 {
			t.Fatalf("statuses %v after %d calls; want both writes created, the second's retry not held back", statuses, len(h.base.Calls()))
		}
	})
}

// The same with a key the server honours that otelretry only records
// (WithRecordedIdempotencyKey, the stripe-go recipe's): the write's 409 is
// returned (the SDK above resends under its key) and holds back no read's
// retry. It held the host for its Retry-After.
func TestRecordedKeyInProgressHoldsBackNoOtherRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusConflict, Header: http.Header{"Retry-After": {"5"}}},
			{Status: http.StatusServiceUnavailable},
			{Status: http.StatusOK},
		}, otelretry.WithRecordedIdempotencyKey(), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		write := post(t, t.Context(), "http://api.test/v1/customers", "email=a")
		write.Header.Set("Idempotency-Key", "k-1")
		for _, req := range []*http.Request{write, get(t, t.Context(), "http://api.test/v1/customers/c1")} {
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", req.Method, err)
			}
			resp.Body.Close()
			if want := map[string]int{http.MethodPost: http.StatusConflict, http.MethodGet: http.StatusOK}[req.Method]; resp.StatusCode != want {
				t.Fatalf("%s: %d after %d calls; want %d", req.Method, resp.StatusCode, len(h.base.Calls()), want)
			}
		}
	})
}

// A write under WithIdempotencyKeys and WithOperationID is sent, the server
// applies it, and then a hook (here the Classifier) panics. A layer above
// that recovers the panic and sends the same write again under the same
// operation id must reuse the key the first try sent: that try may have
// been applied (it was), and "Under one WithOperationID, a layer above that
// sends the operation again reuses its key".
func TestAPanicAfterAKeyedWriteWasSentKeepsItsKeyForTheRepeat(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	var once sync.Once
	client := &http.Client{Transport: otelretry.NewTransport(srv.Client().Transport,
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			panicked := false
			once.Do(func() { panicked = true })
			if panicked {
				panic("classifier bug")
			}
			return otelretry.Classification{}
		}))}
	ctx := otelretry.WithOperationID(t.Context(), "job-9")
	try := func() (recovered any) {
		defer func() { recovered = recover() }()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":"A1"}`))
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil
	}
	if r := try(); r == nil {
		t.Fatal("first try: no panic")
	}
	if r := try(); r != nil {
		t.Fatalf("second try panicked: %v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" {
		t.Fatalf("keys %q, want two", keys)
	}
	if keys[0] != keys[1] {
		t.Fatalf("the repeat under operation id job-9 went out under a new key %q, not %q: the write applied by the try that panicked is applied again", keys[1], keys[0])
	}
}

// Under one WithOperationID, a write repeated after it did not succeed
// takes its key, and any other write gets its own (docs/decisions.md):
// the same order for two users (the URL's userinfo, which net/http sends
// as its own Authorization) is two writes. They shared a key, and the
// server replayed alice's stored 201 to bob, whose order was never placed.
func TestWritesForTwoUsersNeverShareAKey(t *testing.T) {
	srv := newKeyStore(t, lostOnce)
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "nightly-orders")
	u, _ := url.Parse(srv.URL + "/orders")
	u.User = url.UserPassword("alice", "pw-a")
	alice := u.String()
	u.User = url.UserPassword("bob", "pw-b")
	bob := u.String()
	if _, _, err := send(t, client, ctx, http.MethodPost, alice, `{"sku":"A1"}`); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("alice's order: %v, want its answer lost", err)
	}
	if status, _, err := send(t, client, ctx, http.MethodPost, bob, `{"sku":"A1"}`); err != nil || status != http.StatusCreated {
		t.Fatalf("bob's order: %d, %v", status, err)
	}
	if keys := srv.keysSent("Idempotency-Key"); len(keys) != 2 || keys[0] == keys[1] || len(srv.appliedPayloads()) != 2 {
		t.Errorf("alice's and bob's orders went out under keys %q, %d applied; want a key each, both applied", keys, len(srv.appliedPayloads()))
	}
}

// A job under one WithOperationID whose writes all lost their answers can
// send each again under its key (docs/decisions.md), up to the 1 024
// writes an operation id remembers (WithOperationID). It remembered 64:
// the 65th order's loss made the first order's repeat a new write, which
// the server applied a second time.
func TestAJobsRepeatKeepsItsKeyBeyondSixtyFourWrites(t *testing.T) {
	const orders = 100
	srv := newKeyStore(t, func(n int) keyFault { return keyFault{lose: n <= orders} })
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1), otelretry.WithoutBudget())
	ctx := otelretry.WithOperationID(t.Context(), "import-job")
	for i := range orders {
		if _, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", fmt.Sprintf(`{"order":%d}`, i)); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("order %d: %v, want its answer lost", i, err)
		}
	}
	if status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"order":0}`); err != nil {
		t.Fatalf("order 0 again: %d, %v", status, err)
	}
	keys := srv.keysSent("Idempotency-Key")
	applied := 0
	for _, p := range srv.appliedPayloads() {
		if p == `POST /orders {"order":0}` {
			applied++
		}
	}
	if keys[0] != keys[len(keys)-1] || applied != 1 {
		t.Errorf("order 0 sent again under key %s (first %s), applied %d times; want its first key, applied once", keys[len(keys)-1], keys[0], applied)
	}
}

// A key the caller or an SDK set is relied on as a generated one is
// (docs/decisions.md, "The caller's key is kept"), in any spelling of its
// header's name: net/http sends a lower-case name as it is, and a server
// reads it. Set as "idempotency-key", it was seen (no key generated) but
// not relied on: the lost answer ended check_state, unrecorded as the
// caller's, where it is resent under the key and answered from the store.
func TestTheCallersKeyInAnySpellingIsReliedOn(t *testing.T) {
	srv := newKeyStore(t, lostOnce)
	client, rec := keyClient(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":"A1"}`))
	req.Header["idempotency-key"] = []string{`"caller-1"`} // as an SDK that writes its headers in lower case
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the lost answer ended %v; want it resent under the caller's key", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	op := spantest.Operations(rec.Ended())[0]
	source, _ := spantest.Attr(op, attrs.IdempotencyKeySourceKey)
	if keys := srv.keysSent("Idempotency-Key"); resp.StatusCode != http.StatusCreated || len(keys) != 2 || keys[0] != `"caller-1"` || keys[1] != keys[0] ||
		source.AsString() != string(attrs.KeySourceCaller) || len(srv.appliedPayloads()) != 1 {
		t.Errorf("status %d, keys sent %q, key source %q, %d applied; want 201 from the store, the caller's key twice, source caller, applied once",
			resp.StatusCode, keys, source.AsString(), len(srv.appliedPayloads()))
	}
}

// Headers are not part of what names a write under one WithOperationID
// (docs/decisions.md): a signing layer above signs each try anew, so the
// repeat of a write whose answer was lost carries another Authorization
// (AWS SigV4's, with its date) and must still go out under its key, to be
// answered from the server's store rather than applied again.
func TestARepeatSignedAnewKeepsItsKey(t *testing.T) {
	srv := newKeyStore(t, lostOnce)
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "signed-order")
	signed := func(date string) []string {
		return []string{"Authorization", "AWS4-HMAC-SHA256 Credential=AKID/" + date + "/us-east-1/execute-api/aws4_request, Signature=" + date, "X-Amz-Date", date}
	}
	if _, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`, signed("20261204T170000Z")...); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("the first try: %v, want its answer lost", err)
	}
	if status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`, signed("20261204T170001Z")...); err != nil || status != http.StatusCreated {
		t.Fatalf("the repeat signed anew: %d, %v", status, err)
	}
	if keys := srv.keysSent("Idempotency-Key"); len(keys) != 2 || keys[0] != keys[1] || len(srv.appliedPayloads()) != 1 {
		t.Errorf("the tries went out under keys %q, %d applied; want one key, applied once", keys, len(srv.appliedPayloads()))
	}
}

// A 307 or 308 asks for the same write again: it is not the write's
// success. Under one WithOperationID, a gateway answered the first hop of
// each try 307 to the same URL; the second try's first hop took the key
// the lost write had kept, and its 307, taken for a success, let the key
// go, so the write applied next went out under a new one: applied twice.
func TestARedirectedWriteKeepsItsKeyForTheRepeat(t *testing.T) {
	store := newKeyStore(t, lostOnce)
	var hops atomic.Int32
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hops.Add(1)%2 == 1 {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Connection", "close") // the next hop on a new one, which net/http does not resend on
			http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		store.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "order-7")
	if _, _, err := send(t, client, ctx, http.MethodPost, gateway.URL+"/orders", `{"sku":"A1"}`); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("first try: %v, want its answer lost", err)
	}
	if status, _, err := send(t, client, ctx, http.MethodPost, gateway.URL+"/orders", `{"sku":"A1"}`); err != nil || status != http.StatusCreated {
		t.Fatalf("second try: %d, %v", status, err)
	}
	keys := store.keysSent("Idempotency-Key")
	if len(keys) != 2 || keys[0] != keys[1] || len(store.appliedPayloads()) != 1 {
		t.Errorf("the write reached the service under keys %q, applied %d times; want one key, applied once", keys, len(store.appliedPayloads()))
	}
}

// A redirected write that succeeds at its next hop lets the first hop's
// key go too: the same order placed again under the same operation id is
// a new write, and shares no key with the first (its first hop went out
// under the key the first order's 307 had kept).
func TestARedirectedWriteThatSucceededLetsItsKeysGo(t *testing.T) {
	store := newKeyStore(t, nil)
	var mu sync.Mutex
	var keys []string
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if r.URL.Path == "/orders" {
			io.Copy(io.Discard, r.Body)
			http.Redirect(w, r, "/v2/orders", http.StatusTemporaryRedirect)
			return
		}
		store.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	client, _ := keyClient(t)
	ctx := otelretry.WithOperationID(t.Context(), "job-9")
	for i := range 2 {
		if status, _, err := send(t, client, ctx, http.MethodPost, gateway.URL+"/orders", `{"sku":"A1"}`); err != nil || status != http.StatusCreated {
			t.Fatalf("order %d: %d, %v", i+1, status, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 4 || len(slices.Compact(slices.Sorted(slices.Values(keys)))) != 4 {
		t.Errorf("the two orders' hops went out under keys %q; want four different ones", keys)
	}
}

// README: "out-of-range values are ignored and reported once". A key
// contract's header name that is none ("", "Idempotency Key") replaced
// the draft's two, unreported, so a POST under the caller's
// Idempotency-Key was a plain write and its 503 was not retried.
func TestABadKeyContractHeaderIsIgnoredAndReported(t *testing.T) {
	for name, opt := range map[string]otelretry.Option{
		"contract, empty":           otelretry.WithIdempotencyKeyContract(""),
		"contract, with a space":    otelretry.WithIdempotencyKeyContract("Idempotency Key"),
		"recorded, with a colon":    otelretry.WithRecordedIdempotencyKey("Key:"),
		"contract, one good of two": otelretry.WithIdempotencyKeyContract("Idempotency_Key\n", "Idempotency-Key"),
	} {
		t.Run(name, func(t *testing.T) {
			errs := captureOtelErrors(t)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.WriteHeader(http.StatusCreated)
			}))
			t.Cleanup(srv.Close)
			client, _ := dialectClient(t, opt, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
			if got := errs(); len(got) != 1 {
				t.Errorf("reported %d times (%v), want once", len(got), got)
			}
			status, _, err := send(t, client, t.Context(), http.MethodPost, srv.URL+"/orders", `{}`, "Idempotency-Key", `"k-1"`)
			contract := !strings.HasPrefix(name, "recorded")
			if want := map[bool]int{true: http.StatusCreated, false: http.StatusServiceUnavailable}[contract]; err != nil || status != want {
				t.Errorf("the keyed POST: %d, %v after %d calls; want %d", status, err, calls.Load(), want)
			}
		})
	}
}

// After a 301, 302 or 303 http.Client follows with a GET: the write is not
// sent again, and was applied (a post/redirect/get, which web frameworks
// answer 302). Such a write succeeded: the same order sent again under
// the id is a new one. A 302 kept the key, and the second order went out
// under the first's, which the server answered from its store: never
// created.
func TestAWriteAnsweredByPostRedirectGetLendsNoKey(t *testing.T) {
	for _, status := range []int{http.StatusSeeOther, http.StatusFound, http.StatusMovedPermanently} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]bool{} // the keys of the orders applied
			var keys []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.Method == http.MethodPost {
					mu.Lock()
					key := r.Header.Get("Idempotency-Key")
					keys = append(keys, key)
					seen[key] = true
					mu.Unlock()
					http.Redirect(w, r, "/orders/1", status)
				}
			}))
			t.Cleanup(srv.Close)
			client, _ := keyClient(t)
			ctx := otelretry.WithOperationID(t.Context(), "job-8")
			for i := range 2 {
				if st, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", `{"sku":"A1"}`); err != nil || st != http.StatusOK {
					t.Fatalf("order %d: %d, %v", i+1, st, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(keys) != 2 || len(seen) != 2 {
				t.Errorf("two orders answered %d went out under keys %q; want a key each", status, keys)
			}
		})
	}
}

// docs/telemetry.md: retry.idempotency_key.source "generated
// (WithIdempotencyKeys)", retry.idempotency_key.value "the key as its
// header carried it". A PrepareAttemptFunc that replaces the generated key
// ends the operation stop/prepare_failed before anything is sent; the
// operation span does not then claim that the hook's value is the key
// otelretry generated (it did: the key was judged on the prepared request
// the hook had changed).
func TestAKeyTheHookReplacedIsNotRecordedAsGenerated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var generated string
		h := newHarness(t, []scripted.Step{{Status: 201}},
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
			otelretry.WithIdempotencyKeyValues(),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				generated = r.Header.Get("Idempotency-Key")
				r.Header.Set("Idempotency-Key", `"hook-key"`)
				return nil
			}))
		_, _, err := roundTrip(t, h, post(t, t.Context(), "http://api.test/orders", `{}`))
		if err == nil || len(h.base.Calls()) != 0 {
			t.Fatalf("err %v, %d calls: want the operation stopped before any call", err, len(h.base.Calls()))
		}
		op := h.operation(t)
		source := attrOf(op, attrs.IdempotencyKeySourceKey).AsString()
		value := attrOf(op, attrs.IdempotencyKeyValueKey).AsString()
		if source == string(attrs.KeySourceGenerated) && value != generated {
			t.Errorf("operation span records retry.idempotency_key.source=%s value=%s; otelretry generated %s (the recorded value is the PrepareAttemptFunc's, never sent)",
				source, value, generated)
		}
	})
}

// A keyed write's 201 whose body breaks as the caller reads it (the
// server applied the write and stored its answer; the connection broke
// on the answer's way): the caller never got the answer, so a layer above
// that sends it again under the same WithOperationID takes its key, and
// the server's store answers it. Applied once.
func TestARepeatAfterTheAnswerBrokeKeepsItsKey(t *testing.T) {
	var mu sync.Mutex
	stored := map[string]bool{}
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		keys = append(keys, key)
		replay := stored[key]
		stored[key] = true
		mu.Unlock()
		if replay {
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "order 1")
			return
		}
		breakMidBody(t, w, "HTTP/1.1 201 Created\r\nContent-Length: 100\r\n\r\norder")
	}))
	defer srv.Close()
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "order-77")
	var got string
	for try := 1; try <= 2 && got == ""; try++ { // a layer above: sends again until it reads the answer
		if b, err := placeOrder(t, client, ctx, srv.URL); err == nil {
			got = b
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] || got != "order 1" {
		t.Errorf("keys on the wire %q, answer %q; want one key for the two tries, the stored answer", keys, got)
	}
}

// A keyed POST answered 302 (post/redirect/get: applied; http.Client
// drains the 302's body and sends a GET) is a success even when that body
// breaks in the drain: the caller reads the GET's answer, and the same
// write sent again later under the same id is a new one, with a key of its
// own.
func TestA302WhoseBodyBreaksInTheDrainLetsItsKeyGo(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			io.WriteString(w, "order")
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		breakMidBody(t, w, "HTTP/1.1 302 Found\r\nLocation: /orders/1\r\nContent-Length: 100\r\n\r\nsee")
	}))
	defer srv.Close()
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "job-9")
	for try := 1; try <= 2; try++ { // the same order placed again after the first succeeded
		if b, err := placeOrder(t, client, ctx, srv.URL); err != nil || b != "order" {
			t.Fatalf("try %d: %q, %v", try, b, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] == keys[1] {
		t.Errorf("keys on the wire %q: the write sent again after its 302 took the key of the one that succeeded", keys)
	}
}

// A keyed 201 whose body the caller stops by closing it while another
// goroutine reads it is a success the caller got: the reader's error is
// the caller's doing, not a break. The same write sent again later under
// the same id is a new one, with a key of its own.
func TestASuccessTheCallerClosedEarlyLetsItsKeyGo(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		first := len(keys) == 1
		mu.Unlock()
		if !first {
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "order 1 ")
		w.(http.Flusher).Flush()
		select { // the rest would stream later
		case <-done:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "job-10")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":"A1"}`))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); read <- err }()
	resp.Body.Close() // the caller has what it wanted: it stops the stream
	if err := <-read; err == nil {
		t.Fatal("the reader ended without an error after the caller's Close")
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":"A1"}`))
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] == keys[1] {
		t.Errorf("keys on the wire %q: the write sent again after a 201 the caller closed took the key of the one that succeeded", keys)
	}
}

// breakMidBody answers with head, which ends in the start of a body its
// Content-Length says is longer, then closes the connection.
func breakMidBody(t *testing.T, w http.ResponseWriter, head string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	buf.WriteString(head)
	buf.Flush()
	conn.Close()
}

// placeOrder POSTs an order to url's /orders under ctx and reads the
// answer: its body, and the error reading it.
func placeOrder(t *testing.T, client *http.Client, ctx context.Context, url string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/orders", strings.NewReader(`{"sku":"A1"}`))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// docs/decisions.md, footnote ³: an Idempotency-Key header the caller set,
// under neither WithIdempotencyKeys nor WithIdempotencyKeyContract, is no
// key: a 503 or a 409 to the POST that carries it is returned, not resent.
func TestACallersKeyHeaderUnderNoKeyOptionIsNoKey(t *testing.T) {
	for _, tc := range []struct {
		status int
		reason attrs.Reason
	}{
		{http.StatusServiceUnavailable, attrs.ReasonNotIdempotent},
		{http.StatusConflict, attrs.ReasonStatus},
	} {
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			return &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		var res otelretry.Results
		req, err := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &res), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", "k-1")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		op, _ := res.Last()
		if calls != 1 || resp.StatusCode != tc.status || op.Outcome != attrs.OutcomeStop || op.Reason != tc.reason {
			t.Errorf("%d: %d calls, answered %d, %s/%s; want 1 call, the answer, stop/%s", tc.status, calls, resp.StatusCode, op.Outcome, op.Reason, tc.reason)
		}
	}
}

// Two operations that repeat, together, a write whose answer was lost
// under one WithOperationID both repeat it (WithIdempotencyKeys: "an
// operation that repeats an earlier one under that context with the same
// method, URL and body, after the earlier one did not succeed, takes its
// key"): each must go out under the lost write's key, or the server,
// which may have applied it, applies it again. The first repeat took the
// key away from the second, which got one of its own (a reviewer's find).
func TestRepeatsInFlightTogetherShareTheLostWritesKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	inB := make(chan struct{})
	release := make(chan struct{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		switch n {
		case 1:
			return nil, errors.New("connection reset by peer")
		case 2:
			close(inB)
			<-release
		}
		return &http.Response{StatusCode: http.StatusCreated, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(1))
	client := &http.Client{Transport: tr}
	ctx := otelretry.WithOperationID(t.Context(), "job")
	const url, body = "http://127.0.0.1:1/orders", `{"sku":"A1"}`
	if _, _, err := send(t, client, ctx, http.MethodPost, url, body); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("first try: %v, want its outcome unknown", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := send(t, client, ctx, http.MethodPost, url, body)
		done <- err
	}()
	<-inB
	_, _, errC := send(t, client, ctx, http.MethodPost, url, body)
	close(release)
	if err := <-done; err != nil || errC != nil {
		t.Fatalf("repeats: %v, %v", err, errC)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("keys %q: the lost write (first) repeated under another key", keys)
	}
}
