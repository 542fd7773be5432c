// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"github.com/otelretry/otelretry-go/otelretry"
)

// keysSeen serves 201 and keeps the Idempotency-Key of every request.
func keysSeen(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), keys...) }
}

// WithAttemptHeader named as a header that holds idempotency keys (the
// draft's, or one the key options name): the attempt's number would be
// sent as every write's key ("1"), and a generated key's header, set
// before the attempt header, was overwritten, so every write ended
// prepare_failed unsent, blaming a PrepareAttemptFunc nobody gave. The
// attempt header is reported once, by name, and dropped: two writes go
// out, each under its own generated key or under none.
func TestAnAttemptHeaderNamedAsAKeyHeaderIsReportedAndDropped(t *testing.T) {
	generated := regexp.MustCompile(`^"[0-9a-f]{32}"$`)
	for name, c := range map[string]struct {
		opts []otelretry.Option
		want func(key string) bool
	}{
		"generated keys": {[]otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())}, generated.MatchString},
		"a contract":     {[]otelretry.Option{otelretry.WithIdempotencyKeyContract()}, func(k string) bool { return k == "" }},
		"recorded keys":  {[]otelretry.Option{otelretry.WithRecordedIdempotencyKey()}, func(k string) bool { return k == "" }},
		"no key option":  {nil, func(k string) bool { return k == "" }},
	} {
		t.Run(name, func(t *testing.T) {
			srv, keys := keysSeen(t)
			errs := captureOtelErrors(t)
			rt := otelretry.NewTransport(nil, append(c.opts, otelretry.WithAttemptHeader("idempotency-key"))...)
			client := &http.Client{Transport: rt}
			defer client.CloseIdleConnections()
			if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), `WithAttemptHeader("Idempotency-Key") ignored`) {
				t.Fatalf("reports %v, want one naming the attempt header", got)
			}
			postTwoWrites(t, client.Transport, context.Background(), srv.URL)
			got := keys()
			if len(got) != 2 || got[0] == "1" || !c.want(got[0]) || !c.want(got[1]) || (got[0] != "" && got[0] == got[1]) {
				t.Errorf("the server saw the keys %q", got)
			}
		})
	}
	// Any other name is no key's, and is not reported.
	errs := captureOtelErrors(t)
	otelretry.NewTransport(nil, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithAttemptHeader("X-Attempt"))
	if got := errs(); len(got) != 0 {
		t.Errorf("WithAttemptHeader(\"X-Attempt\") reported %v", got)
	}
}

// A name an option ignores is reported quoted, as the call writes it:
// printed bare, an empty name read as a call with no argument
// (WithRecordedIdempotencyKey() is valid, and means the defaults) and a
// name with spaces as several arguments.
func TestOptionMessagesQuoteTheIgnoredName(t *testing.T) {
	for _, c := range []struct {
		opt  otelretry.Option
		want string
	}{
		{otelretry.WithAttemptHeader(""), `WithAttemptHeader("")`},
		{otelretry.WithOperationIDHeader(""), `WithOperationIDHeader("")`},
		{otelretry.WithRecordedIdempotencyKey(""), `WithRecordedIdempotencyKey("")`},
		{otelretry.WithIdempotencyKeyContract(""), `WithIdempotencyKeyContract("")`},
		{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{}), `WithIdempotencyKeys("")`},
		{otelretry.WithRetryHint("", otelretry.HintSeconds), `WithRetryHint("")`},
		{otelretry.WithShouldRetryHeaders("Stripe Should Retry"), `WithShouldRetryHeaders("Stripe "… (19 bytes))`},
		{otelretry.WithRetryHint("X-Wait", 7), `WithRetryHint("X-Wait", 7)`},
		{otelretry.WithBodyBuffer(-1, 10), `WithBodyBuffer(-1, 10)`},
		{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "K", Value: func(string) string { return "" }}),
			`WithIdempotencyKeys("K"): its Value ignored`},
		// A Value that writes no key would send every write one key (a
		// reviewer's note: nothing caught it).
		{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "K", Value: func(string) string { return `"constant"` }}),
			`WithIdempotencyKeys("K"): its Value ignored: want one that writes the key it is given whole`},
	} {
		errs := captureOtelErrors(t)
		otelretry.NewTransport(nil, c.opt)
		got := errs()
		if len(got) != 1 || !strings.Contains(got[0].Error(), c.want) {
			t.Errorf("reports %v, want one that names %s", got, c.want)
		}
	}
}

// A method name that is no HTTP token ("PUT " with a space, "PUT, DELETE"
// as one string) matches no request: WithIdempotentMethods reports it, as
// any value it ignores, and keeps the others ("put" is PUT).
func TestIdempotentMethodsReportsANameThatIsNoMethod(t *testing.T) {
	for m, shown := range map[string]string{
		"PUT ":        `"PUT "`,
		"PUT, DELETE": `"PUT,"… (11 bytes)`, // cut after the first byte no name holds
		" delete":     `" "… (7 bytes)`,
		"":            `""`,
	} {
		errs := captureOtelErrors(t)
		otelretry.NewTransport(nil, otelretry.WithIdempotentMethods(m, "put"))
		if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), "WithIdempotentMethods("+shown+") ignored") {
			t.Errorf("WithIdempotentMethods(%q, \"put\"): reports %v, want one naming %s", m, got, shown)
		}
	}
	errs := captureOtelErrors(t)
	otelretry.NewTransport(nil, otelretry.WithIdempotentMethods("put", "PURGE"))
	if got := errs(); len(got) != 0 {
		t.Errorf("valid methods reported %v", got)
	}
}

// WithOperationIDHeader named as a header that holds idempotency keys
// sent the operation's id as every write's key: two different writes of a
// job under one WithOperationID went out under one key ("batch-7"), which
// a server that follows the draft answers with the first's stored result,
// and nothing was reported. It is reported and dropped, as the attempt
// header is; so are either named as a propagated field, and the attempt
// header named as the operation id's.
func TestAnAddedHeaderNamedAsAnotherOwnersIsReportedAndDropped(t *testing.T) {
	for name, c := range map[string]struct {
		opts   []otelretry.Option
		report string
		header string // the header that must not carry the id
	}{
		"draft header, contract": {[]otelretry.Option{otelretry.WithIdempotencyKeyContract(), otelretry.WithOperationIDHeader("Idempotency-Key")},
			`WithOperationIDHeader("Idempotency-Key") ignored`, "Idempotency-Key"},
		"draft header, no option": {[]otelretry.Option{otelretry.WithOperationIDHeader("idempotency-key")},
			`WithOperationIDHeader("Idempotency-Key") ignored`, "Idempotency-Key"},
		"a contract's own header": {[]otelretry.Option{otelretry.WithIdempotencyKeyContract("X-Request-Key"), otelretry.WithOperationIDHeader("X-Request-Key")},
			`WithOperationIDHeader("X-Request-Key") ignored`, "X-Request-Key"},
		"a recorded key's header": {[]otelretry.Option{otelretry.WithRecordedIdempotencyKey("X-Request-Key"), otelretry.WithOperationIDHeader("X-Request-Key")},
			`WithOperationIDHeader("X-Request-Key") ignored`, "X-Request-Key"},
		"a propagated field": {[]otelretry.Option{otelretry.WithOperationIDHeader("baggage")},
			`WithOperationIDHeader("Baggage") ignored`, "Baggage"},
		"the attempt header as the id's": {[]otelretry.Option{otelretry.WithOperationIDHeader("X-Req"), otelretry.WithAttemptHeader("x-req")},
			`WithAttemptHeader("X-Req") ignored`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			errs := captureOtelErrors(t)
			var sent []http.Header
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = append(sent, r.Header.Clone())
				return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Request: r}, nil
			})
			rt := otelretry.NewTransport(base, c.opts...)
			if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), c.report) {
				t.Fatalf("reports %v, want one with %s", got, c.report)
			}
			ctx := otelretry.WithOperationID(context.Background(), "batch-7")
			postTwoWrites(t, rt, ctx, "http://dependency.test/orders")
			for _, h := range sent {
				if c.header != "" && h.Get(c.header) == "batch-7" {
					t.Errorf("the operation's id went out in %s", c.header)
				}
				if c.header == "" && h.Get("X-Req") != "batch-7" {
					t.Errorf("X-Req = %q, want the operation's id (the attempt header dropped)", h.Get("X-Req"))
				}
			}
		})
	}
}

// fieldsPropagator is a propagator that writes only the fields it names.
type fieldsPropagator []string

func (fieldsPropagator) Inject(context.Context, propagation.TextMapCarrier) {}
func (fieldsPropagator) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (p fieldsPropagator) Fields() []string { return p }

// Under WithPropagators, the fields refused are that propagator's: the
// W3C names are free when it does not write them.
func TestAnAddedHeaderIsRefusedForTheConfiguredPropagatorsFields(t *testing.T) {
	errs := captureOtelErrors(t)
	otelretry.NewTransport(nil, otelretry.WithPropagators(fieldsPropagator{"b3"}), otelretry.WithOperationIDHeader("Tracestate"))
	if got := errs(); len(got) != 0 {
		t.Errorf("WithOperationIDHeader(\"Tracestate\") under a b3 propagator reported %v", got)
	}
	otelretry.NewTransport(nil, otelretry.WithPropagators(fieldsPropagator{"b3"}), otelretry.WithOperationIDHeader("B3"))
	if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), `WithOperationIDHeader("B3") ignored`) {
		t.Errorf("WithOperationIDHeader(\"B3\") under a b3 propagator: reports %v, want one", got)
	}
}

// postTwoWrites sends two different POSTs to url through rt under ctx, one
// after the other, and closes their bodies.
func postTwoWrites(t *testing.T, rt http.RoundTripper, ctx context.Context, url string) {
	t.Helper()
	for _, body := range []string{`{"sku":"A1"}`, `{"sku":"B2"}`} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}
