// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// esAnswer answers as Elasticsearch does (the client checks the product
// header on its first 2xx).
func esAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

const (
	esHits        = `{"took":1,"timed_out":false,"hits":{"total":{"value":1,"relation":"eq"},"hits":[{"_index":"items","_id":"42","_source":{"name":"a small item"}}]}}`
	esDoc         = `{"_index":"items","_id":"42","found":true,"_source":{"name":"a small item"}}`
	esUnavailable = `{"error":{"type":"unavailable_shards_exception","reason":"busy"},"status":503}`
	esQuery       = `{"query":{"match":{"name":"small"}}}`
)

type esSetup int

const (
	esDefaults           esSetup = iota // the client at its defaults
	esRecipe                            // otelretryOwnsElasticsearchRetries
	esRetriesOffUnmarked                // DisableRetry only
)

func (s esSetup) String() string {
	return [...]string{"SDK defaults", "recipe", "SDK retries off, reads not marked"}[s]
}

// esClient is a client of the fake over a fresh otelretry Transport;
// tries counts the client's calls to it.
func esClient(t *testing.T, url string, s esSetup, opts ...otelretry.Option) (*elasticsearch.Client, *tries) {
	rt := &tries{next: testTransport(opts...)}
	cfg := elasticsearch.Config{Addresses: []string{url}, Transport: rt}
	switch s {
	case esRecipe:
		otelretryOwnsElasticsearchRetries(&cfg)
	case esRetriesOffUnmarked:
		cfg.DisableRetry = true
	}
	es, err := elasticsearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return es, rt
}

func esSearch(ctx context.Context, es *elasticsearch.Client, body io.Reader) (*esapi.Response, error) {
	return es.Search(es.Search.WithContext(ctx), es.Search.WithIndex("items"), es.Search.WithBody(body))
}

// esStatus reads and closes a response, and returns its status (0 for none).
func esStatus(res *esapi.Response) int {
	if res == nil {
		return 0
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// TestElasticsearchReadRetried: a read answered 503, 503, 200, sent as GET
// (a document) and as POST (_search).
func TestElasticsearchReadRetried(t *testing.T) {
	for _, read := range []string{"GET /items/_doc/42", "POST /items/_search"} {
		for _, s := range []esSetup{esDefaults, esRecipe, esRetriesOffUnmarked} {
			t.Run(read+"/"+s.String(), func(t *testing.T) {
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					switch {
					case n <= 2:
						esAnswer(w, 503, esUnavailable)
					case strings.HasPrefix(k, "GET"):
						esAnswer(w, 200, esDoc)
					default:
						esAnswer(w, 200, esHits)
					}
				})
				es, rt := esClient(t, f.URL, s)
				var res *esapi.Response
				var err error
				if strings.HasPrefix(read, "GET") {
					res, err = es.Get("items", "42", es.Get.WithContext(t.Context()))
				} else {
					res, err = esSearch(t.Context(), es, strings.NewReader(esQuery))
				}
				status, got := esStatus(res), f.executed(read)
				t.Logf("%s 503, 503, 200, %s: executed %d in %d client tries, status %d, err %v", read, s, got, rt.n.Load(), status, err)
				if s == esRetriesOffUnmarked && strings.HasPrefix(read, "POST") {
					if status != 503 || got != 1 {
						t.Errorf("executed %d, status %d; want 1 and the 503 (a POST otelretry may not repeat)", got, status)
					}
					return
				}
				if err != nil || status != 200 || got != 3 {
					t.Fatalf("executed %d, status %d, err %v; want 3 and 200", got, status, err)
				}
				if want := int32(1); s == esDefaults && strings.HasPrefix(read, "POST") {
					// otelretry stops at each 503 of the unmarked POST; the client retries.
					if rt.n.Load() != 3 {
						t.Errorf("%d client tries, want 3", rt.n.Load())
					}
				} else if rt.n.Load() != want {
					t.Errorf("%d client tries, want 1 (otelretry retried)", rt.n.Load())
				}
				bodies := f.bodiesOf(read)
				for _, b := range bodies[1:] {
					if b != bodies[0] {
						t.Errorf("retried body %q, first %q", b, bodies[0])
					}
				}
			})
		}
	}
}

// A _search body of unknown length (an io.Reader the client cannot size):
// the client buffers bodies for its own retries, which the recipe keeps
// on (for another node), so otelretry replays it too. With DisableRetry
// (the recipe before) it was sent chunked, not replayable: the first 503
// was the answer.
func TestElasticsearchUnknownLengthBody(t *testing.T) {
	for _, s := range []esSetup{esRecipe, esRetriesOffUnmarked} {
		t.Run(s.String(), func(t *testing.T) {
			f := searchesUnavailable(t, 2)
			es, _ := esClient(t, f.URL, s)
			res, err := esSearch(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), es, io.MultiReader(strings.NewReader(esQuery)))
			status, got := esStatus(res), f.executed("POST /items/_search")
			t.Logf("unknown-length _search body, %s: executed %d, status %d, err %v", s, got, status, err)
			want, wantStatus := 3, 200
			if s == esRetriesOffUnmarked {
				want, wantStatus = 1, 503 // DisableRetry: sent chunked, not replayable
			}
			if got != want || status != wantStatus {
				t.Errorf("executed %d, status %d; want %d and %d", got, status, want, wantStatus)
			}
		})
	}
}

// TestElasticsearchWriteNotRepeated: an index request (POST /items/_doc,
// the server picks the id) that the server executed and never answered
// (hung), or answered by dropping the connection.
func TestElasticsearchWriteNotRepeated(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hung", "dropped"} {
		for _, s := range []esSetup{esDefaults, esRecipe} {
			t.Run(mode+"/"+s.String(), func(t *testing.T) {
				// A hung server is waited out under the client's own
				// timeouts; each case has a server and a client of its
				// own, so the cases wait together.
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if mode == "hung" {
						hang(r)
						return
					}
					drop(w)
				})
				es, rt := esClient(t, f.URL, s)
				res, err := es.Index("items", strings.NewReader(`{"name":"a small item"}`), es.Index.WithContext(t.Context()))
				esStatus(res)
				got := f.executed("POST /items/_doc")
				t.Logf("%s write, %s: executed %d in %d client tries, unknown outcome %v, err %v", mode, s, got, rt.n.Load(), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
				if err == nil {
					t.Fatal("no error")
				}
				if s == esDefaults && got != 4 {
					t.Errorf("executed %d; the client at its defaults was measured resending it to 4", got)
				}
				if s == esRecipe {
					if got != 1 {
						t.Errorf("executed %d, want 1", got)
					}
					var oe *otelretry.Error
					if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.OperationID == "" {
						t.Errorf("error %v: want ErrOutcomeUnknown and the operation id", err)
					}
				}
			})
		}
	}
}

// TestElasticsearchScrollNotRepeated: the scroll API's next batch (POST
// /_search/scroll) moves the scroll's cursor on each call. Taken for a
// read by its _search, it was resent after the attempt timeout, and the
// caller got batch 2: batch 1's hits were lost without an error.
func TestElasticsearchScrollNotRepeated(t *testing.T) {
	for path, read := range map[string]bool{"/_search/scroll": false, "/_search/scroll/abc": false, "/items/_search": true,
		"/_search": true, "/items/_doc/_search": false, "/_search/template": true} {
		if isElasticsearchRead(path) != read {
			t.Errorf("isElasticsearchRead(%q) = %v, want %v", path, !read, read)
		}
	}
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 { // a large batch, answered after the attempt timeout
			select {
			case <-r.Context().Done():
				return
			case <-time.After(600 * time.Millisecond):
			}
		}
		esAnswer(w, 200, fmt.Sprintf(`{"_scroll_id":"scroll-1","hits":{"hits":[{"_id":"batch-%d"}]}}`, n))
	})
	es, _ := esClient(t, f.URL, esRecipe)
	res, err := es.Scroll(es.Scroll.WithContext(t.Context()), es.Scroll.WithScrollID("scroll-1"), es.Scroll.WithScroll(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if got := f.executed("POST /_search/scroll"); got != 1 || !strings.Contains(string(b), "batch-1") {
		t.Errorf("the scroll call was executed %d times, and the caller got %s; want once, batch-1", got, b)
	}
}

// TestElasticsearchRetryAfter: a _search answered 429 with Retry-After,
// then the hits.
func TestElasticsearchRetryAfter(t *testing.T) {
	for _, s := range []esSetup{esDefaults, esRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					esAnswer(w, 429, `{"error":{"type":"es_rejected_execution_exception"},"status":429}`)
					return
				}
				esAnswer(w, 200, esHits)
			})
			es, _ := esClient(t, f.URL, s)
			res, err := esSearch(t.Context(), es, strings.NewReader(esQuery))
			const key = "POST /items/_search"
			status, got, gap := esStatus(res), f.executed(key), f.gap(key)
			t.Logf("_search 429 Retry-After: 1, then 200, %s: executed %d, gap %v, status %d, err %v", s, got, gap.Round(10*time.Millisecond), status, err)
			switch s {
			case esDefaults:
				// 429 is not among the client's retried statuses (502, 503, 504).
				if got != 1 || status != 429 {
					t.Errorf("executed %d, status %d; measured 1 and the 429", got, status)
				}
			case esRecipe:
				if got != 2 || status != 200 || gap < 900*time.Millisecond {
					t.Errorf("executed %d, status %d, gap %v; want 2, 200, after the server's 1s", got, status, gap)
				}
			}
		})
	}
}

// TestElasticsearchCallerDeadline: the caller's deadline (300ms) is
// shorter than otelretry's (2s); the server hangs on a _search.
func TestElasticsearchCallerDeadline(t *testing.T) {
	for _, s := range []esSetup{esDefaults, esRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			es, rt := esClient(t, f.URL, s)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			res, err := esSearch(ctx, es, strings.NewReader(esQuery))
			esStatus(res)
			took, got := time.Since(start), f.executed("POST /items/_search")
			t.Logf("caller deadline 300ms, %s: executed %d in %d client tries, took %v, err %v", s, got, rt.n.Load(), took.Round(10*time.Millisecond), err)
			if !errors.Is(err, context.DeadlineExceeded) || took > time.Second || got != 1 {
				t.Errorf("executed %d, took %v, err %v; want 1, about 300ms, a deadline", got, took, err)
			}
			if s == esRecipe && errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v: a _search marked repeatable is a read, and claims no unknown outcome", err)
			}
			if s == esDefaults && rt.n.Load() != 4 {
				t.Errorf("%d client tries; measured 4 (3 after the deadline, none sent by otelretry)", rt.n.Load())
			}
		})
	}
}

// TestElasticsearchLargeDownload: a _search whose answer (4 MiB) takes
// longer than the attempt timeout to read is read whole.
func TestElasticsearchLargeDownload(t *testing.T) {
	page := `{"hits":{"hits":[{"_source":{"blob":"` + strings.Repeat("x", 4<<20) + `"}}]}}`
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.WriteHeader(200)
		for i := 0; i < 8; i++ { // 8 chunks, 60ms apart, past the 400ms attempt timeout
			io.WriteString(w, page[i*len(page)/8:(i+1)*len(page)/8])
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	})
	es, _ := esClient(t, f.URL, esRecipe)
	res, err := esSearch(t.Context(), es, strings.NewReader(esQuery))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || len(b) != len(page) || f.executed("POST /items/_search") != 1 {
		t.Errorf("read %d of %d bytes in %d executions, err %v", len(b), len(page), f.executed("POST /items/_search"), err)
	}
}

// The client sets CACert on an *http.Transport only: with otelretry's
// Transport it refuses, and TLS is set on the base instead.
func TestElasticsearchCACertNeedsTheBase(t *testing.T) {
	_, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{"https://127.0.0.1:9200"},
		Transport: testTransport(), CACert: []byte("-----BEGIN CERTIFICATE-----\n")})
	t.Logf("CACert with otelretry's Transport: %v", err)
	if err == nil {
		t.Error("NewClient accepted CACert with a Transport that is not an *http.Transport")
	}
}

// TestElasticsearchDeadNodeFailover: a cluster of two nodes, one down
// (connection refused: nothing sent). At its defaults the client sends the
// call again to its next node; the recipe's DisableRetry turned that off,
// and otelretry, below the client's choice of node, could only try the
// dead node again: the first call after a node died failed. The recipe
// keeps the client's retry to another node for a failed dial.
func TestElasticsearchDeadNodeFailover(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	for _, s := range []esSetup{esDefaults, esRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(k, "GET") {
					esAnswer(w, 200, esDoc)
					return
				}
				esAnswer(w, 200, esHits)
			})
			rt := &tries{next: testTransport()}
			cfg := elasticsearch.Config{Addresses: []string{dead, f.URL}, Transport: rt}
			if s == esRecipe {
				otelretryOwnsElasticsearchRetries(&cfg)
			}
			es, err := elasticsearch.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			failed := failedSearches(t, es, 4)
			t.Logf("%s: %d of 4 searches failed, %d client tries, live node executed %d", s, failed, rt.n.Load(), f.executed("POST /items/_search"))
			if failed != 0 {
				t.Errorf("%d of 4 searches failed with one of two nodes down; want 0 (the client's failover to the live node)", failed)
			}
		})
	}
}

// failedSearches sends n _search calls through es and returns how many
// failed (an error or a status other than 200).
func failedSearches(t *testing.T, es *elasticsearch.Client, n int) int {
	failed := 0
	for i := range n {
		res, err := esSearch(t.Context(), es, strings.NewReader(esQuery))
		status := esStatus(res)
		t.Logf("_search %d: status %d, err %v", i, status, err)
		if err != nil || status != 200 {
			failed++
		}
	}
	return failed
}

// deadAddr is an address nothing listens on.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// dialCounter counts the dials of each address made by the base transport.
type dialCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *dialCounter) transport() *http.Transport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	var dialer net.Dialer
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.mu.Lock()
		d.n[addr]++
		d.mu.Unlock()
		return dialer.DialContext(ctx, network, addr)
	}
	return base
}

func (d *dialCounter) total() (n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.n {
		n += c
	}
	return n
}

// TestElasticsearchNodesDownTriedOnce: one node (the recipe's own
// newElasticsearch), or three, all refusing connections. The client's
// retry "to another node" went to the same node again, each try an
// otelretry operation of 3 attempts (one node: 4 tries, 6 dials before
// the budget refused): the recipe tries each other node once at most.
func TestElasticsearchNodesDownTriedOnce(t *testing.T) {
	for _, nodes := range []int{1, 3} {
		t.Run(strings.Repeat("n", nodes), func(t *testing.T) {
			d := &dialCounter{n: map[string]int{}}
			rt := &tries{next: otelretry.NewTransport(d.transport(), testOptions()...)}
			var addrs []string
			for range nodes {
				addrs = append(addrs, "http://"+deadAddr(t))
			}
			cfg := elasticsearch.Config{Addresses: addrs, Transport: rt}
			otelretryOwnsElasticsearchRetries(&cfg)
			es, err := elasticsearch.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := esSearch(t.Context(), es, strings.NewReader(esQuery))
			esStatus(res)
			d.mu.Lock()
			per := d.n
			d.mu.Unlock()
			t.Logf("%d node(s), all down: %d client tries, %d dials %v, err %v", nodes, rt.n.Load(), d.total(), per, err)
			for a, n := range per {
				if n > 3 {
					t.Errorf("node %s dialed %d times in one call: the client's retries (%d tries) times otelretry's 3 attempts; want at most otelretry's 3", a, n, rt.n.Load())
				}
			}
		})
	}
}

// TestElasticsearchDiscoveredNodeFailover: one seed address, the
// cluster's nodes discovered (a dead one and the live one). Counting
// cfg.Addresses alone, the recipe took the client for one node and never
// moved on: the first call failed. With discovery configured
// (DiscoverNodesInterval here; the test discovers at once), it moves on.
func TestElasticsearchDiscoveredNodeFailover(t *testing.T) {
	dead := deadAddr(t)
	for _, s := range []esSetup{esDefaults, esRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			var live string
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if k == "GET /_nodes/http" {
					esAnswer(w, 200, `{"nodes":{"a":{"name":"a","roles":["data"],"http":{"publish_address":"`+dead+`"}},"b":{"name":"b","roles":["data"],"http":{"publish_address":"`+live+`"}}}}`)
					return
				}
				esAnswer(w, 200, esHits)
			})
			live = strings.TrimPrefix(f.URL, "http://")
			rt := &tries{next: testTransport()}
			cfg := elasticsearch.Config{Addresses: []string{f.URL}, Transport: rt, DiscoverNodesInterval: time.Hour}
			if s == esRecipe {
				otelretryOwnsElasticsearchRetries(&cfg)
			}
			es, err := elasticsearch.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := es.DiscoverNodes(); err != nil {
				t.Fatal(err)
			}
			failed := failedSearches(t, es, 4)
			t.Logf("%s: %d of 4 failed, %d client tries, live node executed %d", s, failed, rt.n.Load(), f.executed("POST /items/_search"))
			if failed != 0 {
				t.Errorf("%d of 4 searches failed with one of two discovered nodes down; want 0", failed)
			}
		})
	}
}

// TestElasticsearchKeepsTheCallersIntent: the recipe marks a _search
// repeatable on top of the Intent the caller gave it, never in its place:
// a search answered 503, 503, 200 under the caller's MaxAttempts of 2 is
// tried twice (retried, and no more), and under its NoRetry once.
func TestElasticsearchKeepsTheCallersIntent(t *testing.T) {
	for _, c := range callersIntents {
		t.Run(c.name, func(t *testing.T) {
			f := searchesUnavailable(t, 2)
			es, _ := esClient(t, f.URL, esRecipe)
			res, err := esSearch(otelretry.WithIntent(t.Context(), c.in), es, strings.NewReader(esQuery))
			if status, got := esStatus(res), f.executed("POST /items/_search"); status != 503 || got != c.want {
				t.Errorf("executed %d, status %d, err %v; want %d and the 503", got, status, err, c.want)
			}
		})
	}
}

// A call a hook makes with the context it was given (a state check's
// lookup) is an operation of its own, which takes none of the calling
// operation's Intent (docs/layers.md): the go-elasticsearch recipe's
// lookup, made by a hook that adds no Intent, is the recipe's read
// (Repeatable), retried after a 503, whatever Intent the write it checks
// was sent with. The recipe kept the Intent IntentFromContext told it,
// which in a hook's context is the calling operation's: the lookup took
// the write's NoRetry.
func TestElasticsearchLookupInAStateCheckTakesNoIntentOfTheWrite(t *testing.T) {
	for _, c := range []struct {
		name  string
		write otelretry.Intent
	}{{"write without Intent", otelretry.Intent{}}, {"write with NoRetry", otelretry.Intent{NoRetry: true}},
		{"write with MaxAttempts 1", otelretry.Intent{MaxAttempts: 1}}} {
		t.Run(c.name, func(t *testing.T) {
			f := searchesUnavailable(t, 1)
			es, _ := esClient(t, f.URL, esRecipe)
			hook := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
				res, err := esSearch(ctx, es, strings.NewReader(esQuery)) // the hook adds no Intent
				if err != nil {
					return otelretry.StateResult{}, err
				}
				defer res.Body.Close()
				io.Copy(io.Discard, res.Body)
				if res.StatusCode == 200 {
					return otelretry.StateResult{State: attrs.StateNotApplied}, nil
				}
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}
			writes := writesLost(func(*http.Request) (*http.Response, error) {
				return nil, io.ErrUnexpectedEOF // the write's answer lost: check_state
			})
			tr := otelretry.NewTransport(writes, testOptions(otelretry.WithMaxAttempts(1), otelretry.WithStateCheck(hook))...)
			req, _ := http.NewRequestWithContext(otelretry.WithIntent(t.Context(), c.write), http.MethodPost, "http://orders.test/orders", strings.NewReader("order"))
			resp, _ := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := f.executed("POST /items/_search"); got != 2 {
				t.Errorf("the state check's _search was sent %d times; want 2 (its 503 retried: the lookup is an operation of its own, Repeatable by the recipe, with no Intent of the write's %+v)", got, c.write)
			}
		})
	}
}

// writesLost is a base whose answers are all lost.
type writesLost func(*http.Request) (*http.Response, error)

func (f writesLost) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// searchesUnavailable is a node that answers its first n searches 503,
// then hits.
func searchesUnavailable(t *testing.T, n int) *countingServer {
	return newCountingServer(t, methodAndPath, func(_ string, i int, w http.ResponseWriter, _ *http.Request) {
		if i <= n {
			esAnswer(w, 503, esUnavailable)
			return
		}
		esAnswer(w, 200, esHits)
	})
}
