// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// openai-go v3.98.0 at its defaults (2 retries), over otelretry with the
// tests' short limits, and with the recipe (otelretryOwnsOpenAIRetries).
// At its defaults it retries 408, 409, 429, every 5xx and any transport
// error, POSTs included, with no idempotency key; it reads x-should-retry
// first, then Retry-After-Ms, then Retry-After, and sends
// X-Stainless-Retry-Count: N on its N-th retry. Three calls: a read (GET a
// model), a create (POST a vector store: a new store each time it is
// executed) and a stateless call billed per call (POST an embedding).

const (
	openaiModel       = `{"id":"gpt-4o","object":"model","created":1,"owned_by":"openai"}`
	openaiVectorStore = `{"id":"vs_1","object":"vector_store","created_at":1,"name":"docs","status":"completed"}`
	openaiEmbedding   = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`
	openaiError       = `{"error":{"message":"busy","type":"server_error","code":null}}`
	openaiRateLimit   = `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`

	openaiRead   = "GET /v1/models/gpt-4o"
	openaiCreate = "POST /v1/vector_stores"
	openaiEmbed  = "POST /v1/embeddings"
)

var openaiCalls = []string{openaiRead, openaiCreate, openaiEmbed}

func openaiAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// openaiSetup is how a test builds its client: at openai-go's defaults or
// with the recipe.
type openaiSetup struct {
	setup
	// defaultBackoff keeps openai-go's own backoff (0.5 s, 1 s, less up to
	// a quarter of jitter), which the other tests cap at 10 ms with
	// WithMaxRetryDelay: that option also refuses a server's hint above it.
	defaultBackoff bool
	// billed is the recipe's Intent for the stateless calls; zero:
	// Repeatable, within the Transport's limits.
	billed otelretry.Intent
	opts   []otelretry.Option // otelretry's, after the tests' short limits
}

// openaiClient is a client of the fake; tries counts the client's calls
// to otelretry.
func openaiClient(url string, o openaiSetup) (openai.Client, *tries) {
	opts := []option.RequestOption{option.WithAPIKey("sk-test"), option.WithBaseURL(url + "/v1/")}
	if o.setup == recipe {
		billed := o.billed
		if billed == (otelretry.Intent{}) {
			billed = otelretry.Intent{Repeatable: true}
		}
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		opts = append(otelretryOwnsOpenAIRetries(hc, billed, testOptions(o.opts...)...), opts...)
		rt := &tries{next: hc.Transport}
		hc.Transport = rt
		return openai.NewClient(opts...), rt
	}
	rt := &tries{next: testTransport(o.opts...)}
	opts = append(opts, option.WithHTTPClient(&http.Client{Transport: rt}))
	if !o.defaultBackoff {
		opts = append(opts, option.WithMaxRetryDelay(10*time.Millisecond))
	}
	return openai.NewClient(opts...), rt
}

func openaiCall(ctx context.Context, c openai.Client, key string) error {
	var err error
	switch key {
	case openaiRead:
		_, err = c.Models.Get(ctx, "gpt-4o")
	case openaiCreate:
		_, err = c.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("docs")})
	default:
		_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: openai.EmbeddingModelTextEmbedding3Small,
			Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a small item")}})
	}
	return err
}

// openaiServe answers every request of the fake: answer plays the first
// ones (n from 1), the rest succeed.
func openaiServe(answer func(n int, w http.ResponseWriter) bool) func(k string, n int, w http.ResponseWriter, r *http.Request) {
	return func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if answer(n, w) {
			return
		}
		switch k {
		case openaiRead:
			openaiAnswer(w, 200, openaiModel)
		case openaiCreate:
			openaiAnswer(w, 200, openaiVectorStore)
		default:
			openaiAnswer(w, 200, openaiEmbedding)
		}
	}
}

// openaiExpect is what a scenario executed in one setup: executions, the
// client's calls to otelretry, and whether the call failed.
type openaiExpect struct {
	executed int
	calls    int32
	failed   bool
}

// TestOpenAIAnswered503: each call answered 503, 503, 200. At the
// defaults otelretry retries the read (3 executions in one openai-go try,
// each X-Stainless-Retry-Count: 0), and openai-go the POSTs, which
// otelretry does not repeat (3 in 3, counted 0, 1, 2). With the recipe
// otelretry retries the read and the embedding (3 in 1, its attempt
// numbers 0, 1, 2), and nothing resends the create: 1, and the 503.
func TestOpenAIAnswered503(t *testing.T) {
	for _, tc := range []struct {
		s      setup
		key    string
		want   openaiExpect
		counts []string
	}{
		{sdkDefaults, openaiRead, openaiExpect{3, 1, false}, []string{"0", "0", "0"}},
		{sdkDefaults, openaiCreate, openaiExpect{3, 3, false}, []string{"0", "1", "2"}},
		{sdkDefaults, openaiEmbed, openaiExpect{3, 3, false}, []string{"0", "1", "2"}},
		{recipe, openaiRead, openaiExpect{3, 1, false}, []string{"0", "1", "2"}},
		{recipe, openaiCreate, openaiExpect{1, 1, true}, []string{"0"}},
		{recipe, openaiEmbed, openaiExpect{3, 1, false}, []string{"0", "1", "2"}},
	} {
		t.Run(tc.s.String()+"/"+tc.key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
				if n <= 2 {
					openaiAnswer(w, 503, openaiError)
					return true
				}
				return false
			}))
			c, rt := openaiClient(f.URL, openaiSetup{setup: tc.s})
			err := openaiCall(t.Context(), c, tc.key)
			got, counts := f.executed(tc.key), f.headerOf(tc.key, "X-Stainless-Retry-Count")
			t.Logf("%s: %s 503, 503, 200: executed %d in %d openai-go tries, X-Stainless-Retry-Count %q, err %v", tc.s, tc.key, got, rt.n.Load(), counts, err)
			if got != tc.want.executed || rt.n.Load() != tc.want.calls || (err != nil) != tc.want.failed {
				t.Errorf("executed %d in %d tries, err %v; want %+v", got, rt.n.Load(), err, tc.want)
			}
			assertHeaders(t, "X-Stainless-Retry-Count", counts, tc.counts)
		})
	}
}

func assertHeaders(t *testing.T, name string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s per execution %q, want %q", name, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s per execution %q, want %q", name, got, want)
			return
		}
	}
}

// TestOpenAIHung: a create and an embedding the server read and never
// answered, under an otelretry deadline of 300 ms. At the defaults
// otelretry waits for each answer until its deadline (the attempt timeout
// does not cut a write it could not retry) and ends each try check_state;
// openai-go resends both twice, with no idempotency key: 3 executions, 3
// stores and 3 billed embeddings, and the caller's error matches
// otelretry.ErrOutcomeUnknown (openai-go returns the last try's error
// while the caller's context is live). With the recipe the create is
// executed once and its error matches ErrOutcomeUnknown; the embedding,
// marked repeatable with an attempt timeout of 100 ms, is cut and sent
// again by otelretry: 3 executions, 3 billed, in one try, max_attempts.
func TestOpenAIHung(t *testing.T) {
	for _, tc := range []struct {
		s       setup
		key     string
		want    openaiExpect
		unknown bool
		outcome attrs.Outcome // of the last operation
	}{
		{sdkDefaults, openaiCreate, openaiExpect{3, 3, true}, true, attrs.OutcomeCheckState},
		{sdkDefaults, openaiEmbed, openaiExpect{3, 3, true}, true, attrs.OutcomeCheckState},
		{recipe, openaiCreate, openaiExpect{1, 1, true}, true, attrs.OutcomeCheckState},
		{recipe, openaiEmbed, openaiExpect{3, 1, true}, false, attrs.OutcomeMaxAttempts},
	} {
		t.Run(tc.s.String()+"/"+tc.key, func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			c, rt := openaiClient(f.URL, openaiSetup{setup: tc.s, opts: []otelretry.Option{otelretry.WithDeadline(300 * time.Millisecond)},
				billed: otelretry.Intent{Repeatable: true, AttemptTimeout: 100 * time.Millisecond, Deadline: time.Second}})
			var results otelretry.Results
			err := openaiCall(otelretry.WithResults(t.Context(), &results), c, tc.key)
			got, ops := f.executed(tc.key), results.Operations()
			t.Logf("%s: hung %s: executed %d in %d openai-go tries, X-Stainless-Retry-Count %q, Idempotency-Key %q, unknown outcome %v, err %v",
				tc.s, tc.key, got, rt.n.Load(), f.headerOf(tc.key, "X-Stainless-Retry-Count"), f.headerOf(tc.key, "Idempotency-Key"), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
			if got != tc.want.executed || rt.n.Load() != tc.want.calls || err == nil {
				t.Errorf("executed %d in %d tries, err %v; want %+v", got, rt.n.Load(), err, tc.want)
			}
			if errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown || len(ops) == 0 || ops[len(ops)-1].Outcome != tc.outcome {
				t.Errorf("err %v, operations %+v; want unknown outcome %v, the last ending %s", err, ops, tc.unknown, tc.outcome)
			}
			for _, k := range f.headerOf(tc.key, "Idempotency-Key") {
				if k != "" {
					t.Errorf("Idempotency-Key %q sent", k)
				}
			}
		})
	}
}

// TestOpenAI429Hints: a 429 carrying each hint OpenAI sends, then 200, at
// openai-go's default backoff. otelretry waits the hint of a read itself,
// and of an embedding with the recipe: 2 executions in one try. It never
// resends a create's 429: at the defaults openai-go waits the hint and
// resends it (2 in 2), with the recipe the 429 is the answer (1). Where a
// retry was made, the hint apart.
func TestOpenAI429Hints(t *testing.T) {
	for _, hint := range []struct {
		name, value string
		wait        time.Duration
	}{
		{"retry-after-ms", "300", 300 * time.Millisecond},
		{"Retry-After", "1", time.Second},
	} {
		for _, tc := range []struct {
			s    setup
			key  string
			want openaiExpect
		}{
			{sdkDefaults, openaiRead, openaiExpect{2, 1, false}},
			{sdkDefaults, openaiCreate, openaiExpect{2, 2, false}},
			{sdkDefaults, openaiEmbed, openaiExpect{2, 2, false}},
			{recipe, openaiRead, openaiExpect{2, 1, false}},
			{recipe, openaiCreate, openaiExpect{1, 1, true}},
			{recipe, openaiEmbed, openaiExpect{2, 1, false}},
		} {
			t.Run(tc.s.String()+"/"+tc.key+"/"+hint.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
					if n == 1 {
						w.Header().Set(hint.name, hint.value)
						openaiAnswer(w, 429, openaiRateLimit)
						return true
					}
					return false
				}))
				c, rt := openaiClient(f.URL, openaiSetup{setup: tc.s, defaultBackoff: true})
				err := openaiCall(t.Context(), c, tc.key)
				got, gap := f.executed(tc.key), f.gap(tc.key)
				t.Logf("%s: %s 429 %s: %s, then 200: executed %d in %d openai-go tries, gap %v, X-Stainless-Retry-Count %q, err %v",
					tc.s, tc.key, hint.name, hint.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), f.headerOf(tc.key, "X-Stainless-Retry-Count"), err)
				if got != tc.want.executed || rt.n.Load() != tc.want.calls || (err != nil) != tc.want.failed {
					t.Errorf("executed %d in %d tries, err %v; want %+v", got, rt.n.Load(), err, tc.want)
				}
				if got == 2 && gap < hint.wait {
					t.Errorf("gap %v, want at least %v (the hint)", gap, hint.wait)
				}
			})
		}
	}
}

// TestOpenAIShouldRetry: a 503 with x-should-retry, then 200. "false":
// neither layer retries, in either setup (1 execution). "true" on a
// create: openai-go resends it at its defaults (2 in 2), and otelretry
// with the recipe, which turns WithShouldRetryWrites on (2 in 1).
func TestOpenAIShouldRetry(t *testing.T) {
	for _, tc := range []struct {
		s     setup
		key   string
		value string
		want  openaiExpect
	}{
		{sdkDefaults, openaiRead, "false", openaiExpect{1, 1, true}},
		{sdkDefaults, openaiCreate, "false", openaiExpect{1, 1, true}},
		{recipe, openaiRead, "false", openaiExpect{1, 1, true}},
		{recipe, openaiCreate, "false", openaiExpect{1, 1, true}},
		{sdkDefaults, openaiCreate, "true", openaiExpect{2, 2, false}},
		{recipe, openaiCreate, "true", openaiExpect{2, 1, false}},
	} {
		t.Run(tc.s.String()+"/"+tc.key+"/"+tc.value, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set("x-should-retry", tc.value)
					openaiAnswer(w, 503, openaiError)
					return true
				}
				return false
			}))
			c, rt := openaiClient(f.URL, openaiSetup{setup: tc.s})
			err := openaiCall(t.Context(), c, tc.key)
			got := f.executed(tc.key)
			t.Logf("%s: %s 503 x-should-retry: %s, then 200: executed %d in %d openai-go tries, err %v", tc.s, tc.key, tc.value, got, rt.n.Load(), err)
			if got != tc.want.executed || rt.n.Load() != tc.want.calls || (err != nil) != tc.want.failed {
				t.Errorf("executed %d in %d tries, err %v; want %+v", got, rt.n.Load(), err, tc.want)
			}
		})
	}
}

// TestOpenAICallerDeadlineResults: 5 vector store creates, each under a
// caller's deadline of 200 ms, against a create that hangs: 1 execution
// each. openai-go's request loop returns ctx.Err() once the context is
// done, so at its defaults the caller's error never matches
// ErrOutcomeUnknown (issue 33), while a result slot reports the unknown
// write every time (one operation, deadline_exceeded). With the recipe,
// newVectorStore's keepOutcomeUnknown puts otelretry's error back: it
// matches ErrOutcomeUnknown and context.DeadlineExceeded every time.
func TestOpenAICallerDeadlineResults(t *testing.T) {
	const creates = 5
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			c, rt := openaiClient(f.URL, openaiSetup{setup: s})
			kept := 0
			for i := range creates {
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				var results otelretry.Results
				var err error
				if s == recipe {
					_, err = newVectorStore(ctx, c, "docs")
				} else {
					err = openaiCall(otelretry.WithResults(ctx, &results), c, openaiCreate)
				}
				cancel()
				if errors.Is(err, otelretry.ErrOutcomeUnknown) {
					kept++
				}
				if got := f.executed(openaiCreate); got != i+1 || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("create %d: executed %d in all, err %v; want 1 more and a deadline", i, got, err)
				}
				if ops := results.Operations(); s == sdkDefaults && (len(ops) != 1 || !results.OutcomeUnknown() || ops[0].Outcome != attrs.OutcomeDeadlineExceeded) {
					t.Errorf("create %d: operations %+v; want one unknown write ended deadline_exceeded", i, ops)
				}
			}
			t.Logf("%s: %d hung creates, caller deadline 200ms: executed %d in %d openai-go tries; the error matched ErrOutcomeUnknown %d times", s, creates, f.executed(openaiCreate), rt.n.Load(), kept)
			if want := map[setup]int{sdkDefaults: 0, recipe: creates}[s]; rt.n.Load() != creates || kept != want {
				t.Errorf("%d tries, %d errors matched ErrOutcomeUnknown; want %d and %d", rt.n.Load(), kept, creates, want)
			}
		})
	}
}
