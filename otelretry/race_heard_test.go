// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The race's answers as the loop hears them, before their Classifiers run
// (docs/hedging.md: "The first answer whose verdict is not `retry` wins"):
// the first success heard wins over any answer that came after it, and an
// answer that came before it is judged as it stands, whichever Classifier
// finishes first.

// reply is how a base answers an attempt: status after a wait, with header;
// a status of 0 waits until the attempt is canceled.
type reply struct {
	status int
	after  time.Duration
	header http.Header
}

// firstAndHedges answers attempt 1 (numbered in X-Attempt) with first and
// every later attempt with hedge.
func firstAndHedges(first, hedge reply) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		rp := first
		if n, _ := strconv.Atoi(r.Header.Get("X-Attempt")); n != 1 {
			rp = hedge
		}
		wait := (<-chan time.Time)(nil)
		if rp.status != 0 {
			wait = time.After(rp.after)
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		h := http.Header{}
		for k, v := range rp.header {
			h[k] = v
		}
		return &http.Response{StatusCode: rp.status, Header: h, Request: r,
			Body: io.NopCloser(strings.NewReader(http.StatusText(rp.status)))}, nil
	}
}

// hedgedAfter20ms hedges a GET after 20 ms, numbering attempts in
// X-Attempt; its Classifier takes 30 ms over a 2xx (a lookup over a
// success) and other over any other answer.
func hedgedAfter20ms(base http.RoundTripper, other time.Duration, opts ...otelretry.Option) *otelretry.Transport {
	return otelretry.NewTransport(base, append([]otelretry.Option{
		otelretry.WithAttemptHeader("X-Attempt"),
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			if a.StatusCode/100 == 2 {
				time.Sleep(30 * time.Millisecond)
			} else {
				time.Sleep(other)
			}
			return otelretry.Classification{}
		})}, opts...)...)
}

// getThrough sends a GET of path through rt with ctx and reads the response.
func getThrough(t *testing.T, rt http.RoundTripper, ctx context.Context, path string) (int, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test"+path, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Attempt 1 is answered 200 at 30 ms (its Classifier takes 30 ms); its
// hedge, sent at 20 ms, is answered 404 at 35 ms and judged at once. The
// 200 came first: it wins, not the 404 whose Classifier finished first.
func TestTheSuccessHeardFirstWinsOverALaterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := hedgedAfter20ms(firstAndHedges(reply{status: 200, after: 30 * time.Millisecond}, reply{status: 404, after: 15 * time.Millisecond}), 0)
		if status, err := getThrough(t, rt, t.Context(), "/x"); err != nil || status != 200 {
			t.Errorf("got %d, %v; want the 200 attempt 1 was answered first (at 30 ms, the hedge's 404 at 35 ms)", status, err)
		}
	})
}

// The caller cancels at 40 ms, after attempt 1's 200 was heard (its
// Classifier runs until 60 ms), while the hedge still waits: the 200 is
// returned, as it is without hedging (callerEnded: "unless it got a
// success"), not the hedge's cancellation.
func TestTheSuccessHeardFirstWinsOverTheCallersLaterCancel(t *testing.T) {
	for name, hedged := range map[string]bool{"hedged": true, "without hedging": false} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := firstAndHedges(reply{status: 200, after: 30 * time.Millisecond}, reply{})
				var rt http.RoundTripper = hedgedAfter20ms(base, 0)
				if !hedged {
					rt = hedgedAfter20ms(base, 0, otelretry.WithHedging(otelretry.Hedging{}))
				}
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(40*time.Millisecond, cancel)
				if status, err := getThrough(t, rt, ctx, "/x"); err != nil || status != 200 {
					t.Errorf("got %d, %v; want the 200 attempt 1 was answered at 30 ms, before the cancellation at 40 ms", status, err)
				}
			})
		})
	}
}

// classifiedFirstOrLast are how long attempt 1's Classifier takes in
// heardFirstRace: classified at 40 ms, before the hedge's 200 (at 65 ms),
// or at 90 ms, after it. The answer that came first is judged first
// either way.
var classifiedFirstOrLast = map[string]time.Duration{"classified_first": 10 * time.Millisecond, "classified_last": 60 * time.Millisecond}

// heardFirstRace: attempt 1 is answered first at 30 ms, its Classifier
// takes classify over it; the hedge, sent at 20 ms, is answered 200 at
// 35 ms, and its Classifier takes 30 ms (classified at 65 ms). It returns
// the status the caller got and the attempts' events.
func heardFirstRace(t *testing.T, first int, classify time.Duration) (int, []event) {
	spans := tracetest.NewSpanRecorder()
	rt := hedgedAfter20ms(firstAndHedges(reply{status: first, after: 30 * time.Millisecond}, reply{status: 200, after: 15 * time.Millisecond}),
		classify, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	status, err := getThrough(t, rt, t.Context(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	var evs []event
	for _, s := range spantest.Attempts(spans.Ended()) {
		evs = append(evs, readEvent(t, s))
	}
	slices.SortFunc(evs, func(a, b event) int { return int(a.Attempt - b.Attempt) })
	return status, evs
}

// A 404 answered first (at 30 ms, the hedge's 200 at 35 ms) is the first
// answer whose verdict is not retry: it wins ("a 404 is the answer,
// whichever attempt brought it"), and is not recorded superseded, though
// the 200's Classifier finishes first.
func TestAStopHeardBeforeTheSuccessWins(t *testing.T) {
	for name, classify := range classifiedFirstOrLast {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				status, evs := heardFirstRace(t, 404, classify)
				if status != 404 || len(evs) != 2 || evs[0].Decision == "superseded" {
					t.Errorf("got %d, attempts %+v; want the 404 attempt 1 was answered first, not superseded", status, evs)
				}
			})
		})
	}
}

// A 503 answered first is the retryable failure it was (retry, in_flight:
// the hedge is still out), not superseded, and the hedge's 200 is returned.
func TestAFailureHeardBeforeTheSuccessIsNotSuperseded(t *testing.T) {
	for name, classify := range classifiedFirstOrLast {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				status, evs := heardFirstRace(t, 503, classify)
				if status != 200 || len(evs) != 2 || evs[0].Decision != "retry" {
					t.Errorf("got %d, attempts %+v; want 200, and attempt 1's 503 recorded retry (in_flight)", status, evs)
				}
			})
		})
	}
}

// attemptsAfterAPushbackHeardFirst runs operation 1 (path /a), answered
// 503 with Retry-After: 5 at 30 ms and by its hedge 200 at 35 ms, then
// operation 2 (path /b), answered 503 then 200, over a Transport hedging
// after 20 ms whose Classifier takes other over the 503; it returns the
// attempts operation 2 made.
func attemptsAfterAPushbackHeardFirst(t *testing.T, other time.Duration, opts ...otelretry.Option) int32 {
	race := firstAndHedges(reply{status: 503, after: 30 * time.Millisecond, header: http.Header{"Retry-After": {"5"}}},
		reply{status: 200, after: 15 * time.Millisecond})
	var secondOp atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path != "/b" {
			return race(r)
		}
		status := 200
		if secondOp.Add(1) == 1 {
			status = 503
		}
		return &http.Response{StatusCode: status, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader("b"))}, nil
	})
	rt := hedgedAfter20ms(base, other, opts...)
	for _, path := range []string{"/a", "/b"} {
		getThrough(t, rt, t.Context(), path)
	}
	return secondOp.Load()
}

// docs/budget.md: "A `Retry-After` on any answer other than a 2xx or 3xx
// holds back the retries, never the first attempts, of every operation to
// that host". Operation 1's attempt 1 is answered 503 with Retry-After: 5
// at 30 ms, its hedge 200 at 35 ms; operation 2 (path /b) is answered 503:
// its retry is held, whether the 503's Classifier takes none, 10 ms
// (judged after the 200 was heard) or 60 ms (after the 200's Classifier
// returned).
func TestAPushbackHeardBeforeTheSuccessHoldsTheHost(t *testing.T) {
	for name, other := range map[string]time.Duration{"fast_classifier": 0, "slow_classifier": 10 * time.Millisecond,
		"classified_after_the_success": 60 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if n := attemptsAfterAPushbackHeardFirst(t, other); n != 1 {
					t.Errorf("operation 2 made %d attempts; want 1: its retry held by the Retry-After: 5 of operation 1's 503, answered first", n)
				}
			})
		})
	}
}

// slowMeterOn is a user's MeterProvider over the SDK's whose histograms
// take 10 ms to record a measurement of one of the statuses (a
// synchronous hop, a contended lock): otelhttp records its
// http.client.request.duration with it after the base returned, on the
// attempt's goroutine.
type slowMeterOn struct {
	embedded.MeterProvider
	statuses []int64
}

func (p slowMeterOn) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return slowMeter{Meter: sdkmetric.NewMeterProvider().Meter(name, o...), statuses: p.statuses}
}

type slowMeter struct {
	metric.Meter
	statuses []int64
}

func (m slowMeter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, err := m.Meter.Float64Histogram(name, o...)
	return slowHistogram{Float64Histogram: h, statuses: m.statuses}, err
}

type slowHistogram struct {
	metric.Float64Histogram
	statuses []int64
}

func (h slowHistogram) Record(ctx context.Context, v float64, o ...metric.RecordOption) {
	set := metric.NewRecordConfig(o).Attributes()
	if s, ok := set.Value(semconv.HTTPResponseStatusCodeKey); ok && slices.Contains(h.statuses, s.AsInt64()) {
		time.Sleep(10 * time.Millisecond)
	}
	h.Float64Histogram.Record(ctx, v, o...)
}

// An answer is heard when the base returns it, before anything above the
// base runs: otelhttp records its metrics with the user's meter first, and
// a meter that took 10 ms over the answer that came first (a 404 at 30 ms,
// a 503 asking for 5 s) let its hedge's 200 at 35 ms win the race, and
// the 503's hold on the host go.
func TestAnAnswerIsHeardBeforeTheUsersMeterRuns(t *testing.T) {
	t.Run("a stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := hedgedAfter20ms(firstAndHedges(reply{status: 404, after: 30 * time.Millisecond}, reply{status: 200, after: 15 * time.Millisecond}),
				0, otelretry.WithMeterProvider(slowMeterOn{statuses: []int64{404}}))
			if status, err := getThrough(t, rt, t.Context(), "/x"); err != nil || status != 404 {
				t.Errorf("got %d, %v; want the 404 answered first", status, err)
			}
		})
	})
	t.Run("a pushback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			if n := attemptsAfterAPushbackHeardFirst(t, 0, otelretry.WithMeterProvider(slowMeterOn{statuses: []int64{503}})); n != 1 {
				t.Errorf("operation 2 made %d attempts; want 1: its retry held by the Retry-After: 5 of operation 1's 503, answered first", n)
			}
		})
	})
}

// A Classifier's pause holds the race's retry as a server's hint does. The
// largest Duration (a classifier's "not before the end of time") overflowed
// the race's hold and was lost: the retry went out at once, where a pause
// of an hour kept it back (the deadline comes first).
func TestAClassifiersLongestPauseHoldsTheRacesRetry(t *testing.T) {
	for _, pause := range []time.Duration{time.Hour, time.Duration(math.MaxInt64)} {
		t.Run(pause.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				base := firstAndHedges(reply{status: 503, after: 40 * time.Millisecond, header: http.Header{"X-Hold": {"forever"}}},
					reply{status: 503, after: 40 * time.Millisecond})
				rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					return base(r)
				}), otelretry.WithoutBudget(), otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithDeadline(2*time.Second),
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithBackoff(otelretry.ConstantBackoff(5*time.Millisecond)),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Header.Get("X-Hold") != "" {
							return otelretry.Retryable(pause)
						}
						return otelretry.Classification{}
					}))
				status, err := getThrough(t, rt, t.Context(), "/items")
				if n := calls.Load(); n != 2 || err != nil || status != 503 {
					t.Errorf("%d calls, then %d, %v; want the first attempt and its hedge, then their 503: the first attempt's Classifier asked for a pause of %v", n, status, err, pause)
				}
			})
		})
	}
}

// A success answered in time wins over a failure answered before it whose
// Classifier outlasts the deadline or the caller's cancel: the failure's
// verdict is the retry the success carries out, not the end that time or
// the caller brought while it was being classified. Attempt 1's 503 comes
// at 30 ms, the hedge's 200 at 35 ms (classified at 65 ms).
func TestASuccessInTimeWinsOverAnEarlierFailureClassifiedPastTheEnd(t *testing.T) {
	for name, tc := range map[string]struct {
		classify time.Duration
		ctx      func(t *testing.T) context.Context
		opts     []otelretry.Option
	}{
		"WithDeadline 1s, classified at 2s": {2 * time.Second, func(t *testing.T) context.Context { return t.Context() },
			[]otelretry.Option{otelretry.WithDeadline(time.Second)}},
		"caller's deadline 1s, classified at 2s": {2 * time.Second, func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			t.Cleanup(cancel)
			return ctx
		}, nil},
		"caller's cancel at 50ms, classified at 130ms": {100 * time.Millisecond, func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx
		}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				spans := tracetest.NewSpanRecorder()
				rt := hedgedAfter20ms(firstAndHedges(reply{status: 503, after: 30 * time.Millisecond}, reply{status: 200, after: 15 * time.Millisecond}),
					tc.classify, append(tc.opts, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))...)
				status, err := getThrough(t, rt, tc.ctx(t), "/x")
				var decisions []string
				for _, s := range spantest.Attempts(spans.Ended()) {
					decisions = append(decisions, readEvent(t, s).Decision)
				}
				slices.Sort(decisions)
				if err != nil || status != 200 || !slices.Equal(decisions, []string{"retry", "return"}) {
					t.Errorf("got %d, %v, decisions %v; want the hedge's 200 (return), attempt 1's 503 a retry", status, err, decisions)
				}
			})
		})
	}
}

// The answer a later one waits for ends by a panic or a runtime.Goexit of
// its Classifier: the waiting one is let go, the panic goes on in the
// caller, and every span ends.
func TestAClassifierPanicOfAnEarlierAnswerLetsTheWaitingOneGo(t *testing.T) {
	for name, fail := range map[string]func(){"panic": func() { panic("classifier broke") }, "Goexit": runtime.Goexit} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				spans := tracetest.NewSpanRecorder()
				rt := otelretry.NewTransport(firstAndHedges(reply{status: 503, after: 30 * time.Millisecond}, reply{status: 200, after: 15 * time.Millisecond}),
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}),
					otelretry.WithAttemptHeader("X-Attempt"),
					otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.StatusCode/100 != 2 {
							time.Sleep(20 * time.Millisecond) // the 200 waits for this answer's verdict
							fail()
						}
						return otelretry.Classification{}
					}))
				returned, recovered := onAGoroutine(func() { getThrough(t, rt, context.Background(), "/x") })
				synctest.Wait()
				if want := map[string]any{"panic": "classifier broke", "Goexit": nil}[name]; returned || recovered != want {
					t.Errorf("returned %v, recovered %v; want the Classifier's %s to go on in the caller", returned, recovered, name)
				}
				if s, e := len(spans.Started()), len(spans.Ended()); s != e {
					t.Errorf("%d spans started, %d ended", s, e)
				}
			})
		})
	}
}

// Four attempts (MaxHedges 3, sent at 0, 20, 40 and 60 ms) answered in
// every order, each with a 503, a 404, a 200 or a transport error, and
// Classifiers that take 0 to 30 ms: the first answer whose verdict is not
// retry wins, those answered before it record retry, those after it
// superseded; with none, the last answer ends the operation. 300 random
// cases of a fixed seed.
func TestTheFirstOfFourAnswersWinsWhateverItsClassifierTakes(t *testing.T) {
	statuses := []int{503, 404, 200, -1}
	classify := []time.Duration{0, 5 * time.Millisecond, 12 * time.Millisecond, 30 * time.Millisecond}
	seed := uint64(1)
	next := func(n int) int { seed = seed*6364136223846793005 + 1442695040888963407; return int(seed>>33) % n }
	for c := range 300 {
		var st [4]int
		var at, cl [4]time.Duration
		perm := []int{0, 1, 2, 3}
		for i := range perm {
			j := i + next(4-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		for i := range 4 {
			st[i] = statuses[next(4)]
			at[perm[i]] = time.Duration(65+7*i) * time.Millisecond // distinct answer times
			cl[i] = classify[next(4)]
		}
		order := []int{0, 1, 2, 3}
		slices.SortFunc(order, func(a, b int) int { return int(at[a] - at[b]) })
		winner := -1
		for _, i := range order {
			if st[i] == 200 || st[i] == 404 {
				winner = i
				break
			}
		}
		t.Run(fmt.Sprintf("%d status=%v answered=%v classified=%v", c, st, at, cl), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				spans := tracetest.NewSpanRecorder()
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
					i := n - 1
					select {
					case <-time.After(at[i] - time.Duration(20*i)*time.Millisecond):
					case <-r.Context().Done():
						return nil, r.Context().Err()
					}
					if st[i] < 0 {
						return nil, errors.New("connection reset by peer")
					}
					return &http.Response{StatusCode: st[i], Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader("x"))}, nil
				})
				rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithMaxAttempts(4),
					otelretry.WithAttemptHeader("X-Attempt"),
					otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1, MaxHedges: 3}),
					otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						time.Sleep(cl[a.Attempt-1])
						return otelretry.Classification{}
					}))
				got, err := getThrough(t, rt, t.Context(), "/x")
				var evs []event
				for _, s := range spantest.Attempts(spans.Ended()) {
					evs = append(evs, readEvent(t, s))
				}
				slices.SortFunc(evs, func(a, b event) int { return int(a.Attempt - b.Attempt) })
				if len(evs) != 4 {
					t.Fatalf("%d attempts, want 4: %+v", len(evs), evs)
				}
				if winner >= 0 && got != st[winner] {
					t.Errorf("got %d, %v; want %d of attempt %d", got, err, st[winner], winner+1)
				}
				before := true
				for _, i := range order {
					switch d := evs[i].Decision; {
					case i == winner || winner < 0 && i == order[3]:
						before = false
						if d == "retry" || d == "superseded" {
							t.Errorf("attempt %d (the race's end) recorded %s", i+1, d)
						}
					case before && d != "retry":
						t.Errorf("attempt %d, answered before the winner, recorded %s, want retry", i+1, d)
					case !before && d != "superseded":
						t.Errorf("attempt %d, answered after the winner, recorded %s, want superseded", i+1, d)
					}
				}
			})
		})
	}
}

// A success that came after the caller's cancel saves no answer before it,
// however long that answer's Classifier takes: attempt 1 is answered 503
// at 30 ms (or cut by the cancel), the caller cancels at 40 ms, the hedge's
// base, which does not watch its context, answers 200 at 45 ms. Attempt 1
// ends the operation canceled either way, the 200 superseded.
func TestASuccessAfterTheCallersCancelSavesNoEarlierAnswer(t *testing.T) {
	for _, first := range []int{503, 0} { // 0: cut by the cancel
		for _, classify := range []time.Duration{12 * time.Millisecond, 30 * time.Millisecond} {
			t.Run(fmt.Sprintf("first %d, classified in %v", first, classify), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					spans := tracetest.NewSpanRecorder()
					base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if r.Header.Get("X-Attempt") != "1" {
							time.Sleep(25 * time.Millisecond)
							return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader("ok"))}, nil
						}
						select {
						case <-time.After(30 * time.Millisecond):
							if first != 0 {
								return &http.Response{StatusCode: first, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader("busy"))}, nil
							}
							<-r.Context().Done()
						case <-r.Context().Done():
						}
						return nil, r.Context().Err()
					})
					rt := hedgedAfter20ms(base, classify, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
					ctx, cancel := context.WithCancel(context.Background())
					time.AfterFunc(40*time.Millisecond, cancel)
					status, err := getThrough(t, rt, ctx, "/x")
					var decisions []string
					for _, s := range spantest.Attempts(spans.Ended()) {
						e := readEvent(t, s)
						decisions = append(decisions, strconv.Itoa(int(e.Attempt))+":"+e.Decision)
					}
					slices.Sort(decisions)
					if status != first || (first == 0) != (err != nil) || !slices.Equal(decisions, []string{"1:canceled", "2:superseded"}) {
						t.Errorf("got %d, %v, decisions %v; want attempt 1's end (canceled), the 200 superseded", status, err, decisions)
					}
				})
			})
		}
	}
}
