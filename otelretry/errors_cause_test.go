// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestAnotherOperationsUnknownOutcomeIsNotTheCallers: a token fetch (a
// POST) made through an otelretry Transport by a PrepareAttemptFunc is an
// operation of its own; its answer lost, its error claims an unknown
// outcome, and the hook returns it. The GET, which sent nothing, matched
// ErrOutcomeUnknown through that cause, while its Results entry said the
// outcome was known: a caller reconciling on the error would reconcile a
// GET. (A base's error may carry it: see
// TestAnUnknownOutcomeFromBelowIsTheOperations.)
func TestAnotherOperationsUnknownOutcomeIsNotTheCallers(t *testing.T) {
	okay := func(r *http.Request) *http.Response {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
	}
	fetchToken := func(rt http.RoundTripper, r *http.Request) error {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, "http://auth.test/token", strings.NewReader("grant_type=client_credentials"))
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	lost := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/token" {
			return nil, io.ErrUnexpectedEOF // sent, its answer lost
		}
		return okay(r), nil
	})
	for name, transport := range map[string]func() http.RoundTripper{
		"a PrepareAttemptFunc's call": func() http.RoundTripper {
			var tr *otelretry.Transport
			tr = otelretry.NewTransport(lost, otelretry.WithDeadline(2*time.Second),
				otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
					if r.URL.Path != "/items" {
						return nil
					}
					return fetchToken(tr, r)
				}))
			return tr
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var results otelretry.Results
				resp, err := transport().RoundTrip(get(t, otelretry.WithResults(t.Context(), &results), "http://api.test/items"))
				if resp != nil {
					resp.Body.Close()
				}
				last, _ := results.Last()
				if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("err %v; want the token fetch's error as the cause", err)
				}
				if errors.Is(err, otelretry.ErrOutcomeUnknown) || last.OutcomeUnknown {
					t.Errorf("the GET's error matches ErrOutcomeUnknown: %v; its entry says %v", errors.Is(err, otelretry.ErrOutcomeUnknown), last.OutcomeUnknown)
				}
			})
		})
	}
}

// TestAnUnknownOutcomeFromBelowIsTheOperations: an otelretry Transport
// stacked over another, whose base reports no writes. The inner sent the
// write, lost its answer, then could not connect: its error claims an
// unknown outcome. The outer read the inner's last dial error as proof
// that nothing was sent, and resent the write (3 copies reached the
// server), or ended max_attempts with RetryableError true and its Results
// entry saying the outcome was known. A base's error that claims an
// unknown outcome says the write may have been applied (an HTTP/2 GOAWAY
// the inner met later is no proof for the outer either).
func TestAnUnknownOutcomeFromBelowIsTheOperations(t *testing.T) {
	for _, later := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
		errors.New("http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM"),
	} {
		for name, outerOpts := range map[string][]otelretry.Option{
			"outer, one attempt": {otelretry.WithMaxAttempts(1)},
			"outer, defaults":    nil,
		} {
			testUnknownOutcomeFromBelow(t, name+", then "+later.Error(), later, outerOpts)
		}
	}
}

func testUnknownOutcomeFromBelow(t *testing.T, name string, later error, outerOpts []otelretry.Option) {
	t.Run(name, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var calls, received atomic.Int64
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if n := calls.Add(1); (n-1)%3 == 0 { // each inner operation's first call
					received.Add(1)
					return nil, io.ErrUnexpectedEOF // sent, its answer lost
				}
				return nil, later
			})
			inner := otelretry.NewTransport(base, otelretry.WithDeadline(2*time.Second),
				otelretry.WithIdempotentMethods(http.MethodPost), otelretry.WithoutBudget())
			outer := otelretry.NewTransport(inner, append([]otelretry.Option{otelretry.WithDeadline(5 * time.Second)}, outerOpts...)...)
			var results otelretry.Results
			_, err := outer.RoundTrip(post(t, otelretry.WithResults(t.Context(), &results), "http://api.test/orders", "order"))
			var oe *otelretry.Error
			if !errors.As(err, &oe) || !errors.Is(err, otelretry.ErrOutcomeUnknown) || oe.RetryableError() || !results.OutcomeUnknown() {
				t.Errorf("err %v; want an unknown outcome, not retryable, in the error and in Results", err)
			}
			if n := received.Load(); n != 1 {
				t.Errorf("%d copies of the write reached the server; want 1", n)
			}
		})
	})
}

// TestTheCallersCauseIsNotTheOperationsOutcome: errgroup cancels its
// context with the first error as the cause. A POST's error that claims
// an unknown outcome ended the group while a GET was in flight or in its
// pause: the GET's error matched ErrOutcomeUnknown through that cause (its
// Results entry said otherwise), whether it came in the base's error or as
// the caller's cause.
func TestTheCallersCauseIsNotTheOperationsOutcome(t *testing.T) {
	for name, baseErr := range map[string]func(context.Context) error{
		"the base returns ctx.Err()":          func(ctx context.Context) error { return ctx.Err() },
		"the base returns context.Cause(ctx)": context.Cause,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.Method == http.MethodPost {
						return nil, io.ErrUnexpectedEOF // sent, its answer lost
					}
					<-r.Context().Done() // the GET hangs until cut
					return nil, baseErr(r.Context())
				})
				tr := otelretry.NewTransport(base, otelretry.WithDeadline(10*time.Second))
				group, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				var results otelretry.Results
				getDone := make(chan error, 1)
				go func() {
					resp, err := tr.RoundTrip(get(t, otelretry.WithResults(group, &results), "http://api.test/items"))
					if resp != nil {
						resp.Body.Close()
					}
					getDone <- err
				}()
				synctest.Wait()
				_, postErr := tr.RoundTrip(post(t, group, "http://api.test/orders", "order"))
				if !errors.Is(postErr, otelretry.ErrOutcomeUnknown) {
					t.Fatalf("the POST's error claims no unknown outcome: %v", postErr)
				}
				cancel(postErr)
				if err := <-getDone; errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.Is(err, postErr) {
					t.Errorf("the GET's error %v: want the caller's cause matched, and no unknown outcome", err)
				}
			})
		})
	}
}

// TestTheCallersCauseIsNoProofOfTheRequest: a base may return the cause
// the caller canceled with (net/http returns context.Cause), a sibling's
// error under errgroup. It is no evidence of this request's: a sibling's
// unknown outcome made a POST still dialing (nothing sent) unknown, and a
// sibling's dial error (or its GOAWAY) made a POST the base had taken read
// as never sent. The cause is found by its value, also one == cannot
// compare (a multi-error: errors.Is never found it); and the base's own
// proof around or beside the cause (a dial error, net/http's "server
// closed idle connection" on a connection the trace saw it take, told by
// its type) still proves nothing was sent.
func TestTheCallersCauseIsNoProofOfTheRequest(t *testing.T) {
	siblingUnknown := siblingUnknownError(t)
	siblingDial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	siblingGoAway := errors.New("http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM")
	// Bases that signal once they hold the POST, then return on its cut.
	taken := func(r *http.Request) error { return context.Cause(r.Context()) }
	dialAround := func(r *http.Request) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: context.Cause(r.Context())}
	}
	idleBeside := func(withCause bool) func(*http.Request) error {
		return func(r *http.Request) error {
			idle := errors.New("http: server closed idle connection")
			if withCause {
				return fmt.Errorf("%w; then %w", idle, context.Cause(r.Context()))
			}
			return fmt.Errorf("%w; then %w", idle, r.Context().Err())
		}
	}
	for _, tc := range []struct {
		name    string
		cause   error
		base    func(*http.Request) error
		unknown bool // want: the base took the write
		conn    bool // the base reports the connection it took (GotConn), as net/http does
	}{
		{"a sibling's dial error, the POST taken", siblingDial, taken, true, false},
		{"a sibling's GOAWAY, the POST taken", siblingGoAway, taken, true, false},
		{"a sibling's dial error in a multi-error, the POST taken", errorList{siblingDial}, taken, true, false},
		{"a sibling's error holding a multi-error in a field, the POST taken", shardFailed{"sync", errorList{siblingDial}}, taken, true, false},
		{"a sibling's error holding a func, the POST taken", withCallback{siblingDial, func() {}}, taken, true, false},
		{"the base's own dial error around the caller's cause", errors.New("sibling failed"), dialAround, false, false},
		{"the base's own dial error around a multi-error holding a sibling's unknown outcome", errorList{siblingUnknown}, dialAround, false, false},
		{"server closed idle connection, beside ctx.Err()", errors.New("sibling failed"), idleBeside(false), false, true},
		{"server closed idle connection, beside the caller's cause", errors.New("sibling failed"), idleBeside(true), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if trace := httptrace.ContextClientTrace(r.Context()); tc.conn && trace != nil && trace.GotConn != nil {
					trace.GotConn(httptrace.GotConnInfo{Reused: true})
				}
				close(held)
				<-r.Context().Done()
				return nil, tc.base(r)
			})
			var results otelretry.Results
			ctx := otelretry.WithResults(cancelCauseWhen(t, tc.cause, held), &results)
			_, err := otelretry.NewTransport(base).RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
			if errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown || results.OutcomeUnknown() != tc.unknown {
				t.Errorf("err %v (Results: unknown %v): want the outcome unknown %v", err, results.OutcomeUnknown(), tc.unknown)
			}
		})
	}
	t.Run("a sibling's unknown outcome, the POST still dialing", func(t *testing.T) {
		dialing, release := make(chan struct{}), make(chan struct{})
		defer close(release)
		base := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			close(dialing)
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil, errors.New("dial abandoned")
		}}
		defer base.CloseIdleConnections()
		var results otelretry.Results
		ctx := otelretry.WithResults(cancelCauseWhen(t, siblingUnknown, dialing), &results)
		_, err := otelretry.NewTransport(base).RoundTrip(post(t, ctx, "http://127.0.0.1:1/orders", "order"))
		if errors.Is(err, otelretry.ErrOutcomeUnknown) || results.OutcomeUnknown() || !errors.Is(err, siblingUnknown) {
			t.Errorf("err %v: want the caller's cause, and the outcome known (nothing sent)", err)
		}
	})
}

// TestTheCallersCauseIsToldOnce: Error names the caller's cause unless
// its own cause does already, as where the base returned it (net/http
// returns context.Cause), alone or inside an error of its own.
func TestTheCallersCauseIsToldOnce(t *testing.T) {
	for _, cause := range []error{errors.New("sibling shard-7 failed"), withCallback{errors.New("sibling shard-7 failed"), func() {}}} {
		testTheCallersCauseIsToldOnce(t, cause)
	}
}

func testTheCallersCauseIsToldOnce(t *testing.T, cause error) {
	for name, baseErr := range map[string]func(*http.Request) error{
		"the base returns the cause": func(r *http.Request) error { return context.Cause(r.Context()) },
		"the base returns ctx.Err()": func(r *http.Request) error { return r.Context().Err() },
		"the base wraps the cause in its own": func(r *http.Request) error {
			return &net.OpError{Op: "read", Net: "tcp", Err: context.Cause(r.Context())}
		},
	} {
		t.Run(fmt.Sprintf("%s, a cause of %T", name, cause), func(t *testing.T) {
			held := make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				close(held)
				<-r.Context().Done()
				return nil, baseErr(r)
			})
			_, err := otelretry.NewTransport(base).RoundTrip(get(t, cancelCauseWhen(t, cause, held), "http://api.test/items"))
			// errors.Is matches a target == can compare only (not withCallback).
			matched := errors.Is(err, cause) || !reflect.TypeOf(cause).Comparable()
			if n := strings.Count(fmt.Sprint(err), cause.Error()); n != 1 || !matched {
				t.Errorf("the cause is told %d times in %q (matched: %v); want once", n, err, matched)
			}
		})
	}
}

// TestAnOperationBelowIsNoProofOfTheWrite: an otelretry Transport over
// another, the inner's POST declared idempotent. The inner sends the POST
// (answered 503), then its retry meets an error that proves that retry
// unsent: a dial error, or a PrepareAttemptFunc's token fetch failing with
// net/http's "server closed idle connection" or a GOAWAY message. None of
// it is proof for the outer, whose one attempt is the inner's whole
// operation: the outer does not resend the write.
func TestAnOperationBelowIsNoProofOfTheWrite(t *testing.T) {
	idle := errors.New("http: server closed idle connection") // net/http's, an errors.New
	goAway := errors.New("http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM")
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for name, tc := range map[string]struct{ prepErr, baseErr error }{
		"the retry's dial error":                {baseErr: dial},
		"the token fetch's *url.Error":          {prepErr: &url.Error{Op: "Post", URL: "http://auth.test/token", Err: idle}},
		"the token fetch's error wrapped by %w": {prepErr: fmt.Errorf("fetching token: %w", idle)},
		"a GOAWAY message, as it is":            {prepErr: goAway},
		"a GOAWAY message wrapped by %w":        {prepErr: fmt.Errorf("fetching token: %w", goAway)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if calls.Add(1) > 1 {
						return nil, tc.baseErr
					}
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				inner := otelretry.NewTransport(base, otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
					otelretry.WithIdempotentMethods(http.MethodPost),
					otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
						if attempt > 1 {
							return tc.prepErr
						}
						return nil
					}))
				outer := otelretry.NewTransport(inner, otelretry.WithoutBudget())
				_, err := outer.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
				want := int64(1)
				if tc.baseErr != nil {
					want = 2
				}
				if n := calls.Load(); n != want || err == nil {
					t.Errorf("the base was called %d times, err %v; want %d (the inner's operation once)", n, err, want)
				}
			})
		})
	}
}

// siblingUnknownError is the error of a write whose answer was lost: it
// claims an unknown outcome.
func siblingUnknownError(t *testing.T) error {
	lost := otelretry.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, io.ErrUnexpectedEOF
	}), otelretry.WithDeadline(2*time.Second))
	_, err := lost.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Fatalf("the sibling's error claims no unknown outcome: %v", err)
	}
	return err
}

// cancelCauseWhen is a context canceled with cause shortly after when is
// closed, as errgroup cancels its group's with the first error.
func cancelCauseWhen(t *testing.T, cause error, when <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancelCause(t.Context())
	t.Cleanup(func() { cancel(nil) })
	go func() { <-when; time.Sleep(20 * time.Millisecond); cancel(cause) }()
	return ctx
}

// errorList is an error == cannot compare (a slice type), as k8s.io's
// utilerrors.Aggregate or any `type Errors []error` is.
type errorList []error

func (m errorList) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (m errorList) Unwrap() []error { return m }

// shardFailed is an error of a struct type with an error field, which
// reflect calls comparable, but on which == panics when the field holds
// an error of a slice type (errorList).
type shardFailed struct {
	op  string
	err error
}

func (e shardFailed) Error() string { return e.op + ": " + e.err.Error() }

func (e shardFailed) Unwrap() error { return e.err }

// withCallback is an error that carries a func (a way to retry, a
// cleanup): == cannot compare it, and reflect.DeepEqual never calls a
// non-nil func equal, not even to itself.
type withCallback struct {
	err      error
	callback func()
}

func (e withCallback) Error() string { return "shard sync: " + e.err.Error() }

func (e withCallback) Unwrap() error { return e.err }

// lookupFailed is a hook's own error type that keeps what ended its lookup
// for errors.Is and errors.As (Unwrap), but tells only its own words, as
// Go lets an error do.
type lookupFailed struct {
	key string
	err error
}

func (e *lookupFailed) Error() string { return "orders lookup by key " + e.key + " failed" }
func (e *lookupFailed) Unwrap() error { return e.err }

// TestTheCallersCauseIsToldOnceAfterAStateCheck: a POST whose answer is
// lost (check_state) is looked up while the caller cancels with a cause
// (errgroup's sibling error). The state check's error holds the cause: a
// lookup through an http.Client with the hook's context gets it from
// net/http, and shows it; a hook's own error type wraps it (errors.Is
// reaches it) and does not. Either way the message tells it once.
func TestTheCallersCauseIsToldOnceAfterAStateCheck(t *testing.T) {
	lookups := map[string]func(hctx context.Context, c otelretry.StateCheck) error{
		"through an http.Client": func(hctx context.Context, c otelretry.StateCheck) error {
			req, err := http.NewRequestWithContext(hctx, http.MethodGet, "http://api.test/orders/by-key/"+c.OperationID, nil)
			if err != nil {
				return err
			}
			// The lookup's transport behaves as net/http's does when its
			// request's context ends: it returns context.Cause.
			lookup := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				<-r.Context().Done()
				return nil, context.Cause(r.Context())
			})}
			_, err = lookup.Do(req)
			return err
		},
		"a hook's error that only wraps it": func(hctx context.Context, c otelretry.StateCheck) error {
			<-hctx.Done()
			return &lookupFailed{key: c.OperationID, err: context.Cause(hctx)}
		},
	}
	for name, lookup := range lookups {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cause := errors.New("sibling shard-7 failed")
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					return nil, io.ErrUnexpectedEOF // the write's answer is lost
				})
				hook := func(hctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					cancel(cause) // the caller gives up while the lookup is in flight
					return otelretry.StateResult{}, lookup(hctx, c)
				}
				tr := otelretry.NewTransport(base, otelretry.WithStateCheck(hook))
				_, err := tr.RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
				if !errors.Is(err, cause) || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Fatalf("setup: err %v; want the caller's cause and an unknown outcome", err)
				}
				if n := strings.Count(err.Error(), cause.Error()); n != 1 {
					t.Errorf("the caller's cause is told %d times; want once\n  err: %v", n, err)
				}
			})
		})
	}
}

// baseWords is a base's own error type: it keeps what ended its call for
// errors.Is (Unwrap) and prints only its own words.
type baseWords struct {
	words string
	err   error
}

func (e *baseWords) Error() string { return e.words }
func (e *baseWords) Unwrap() error { return e.err }

// TestTheCallersCauseIsToldWhenTheBasesErrorOnlyWrapsIt: a GET in flight
// when the caller cancels with a cause; the base returns an error of its
// own type that wraps context.Cause and prints only its own words, which
// may contain the cause's text ("unexpected EOF" around a cause "EOF"):
// the message tells the cause, as the caller's.
func TestTheCallersCauseIsToldWhenTheBasesErrorOnlyWrapsIt(t *testing.T) {
	cases := []struct{ cause, words string }{
		{"sibling shard-7 failed", "orders lookup by key items failed"},
		{"EOF", "upstream read: unexpected EOF"},
		{"failed", "lookup failed"},
	}
	for _, c := range cases {
		t.Run(c.cause+" under "+c.words, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cause := errors.New(c.cause)
				err := canceledInFlight(t, cause, func(e error) error { return &baseWords{words: c.words, err: e} })
				if !errors.Is(err, cause) {
					t.Fatalf("setup: err %v; want the caller's cause", err)
				}
				if rest := strings.Replace(err.Error(), c.words, "", 1); !strings.Contains(rest, "the caller's cause: "+c.cause) {
					t.Errorf("the caller's cause %q is not told as the caller's\n  err: %v", c.cause, err)
				}
			})
		})
	}
}

// TestTheCallersCauseEndingInAURLIsToldOnce: the caller cancels with a
// cause whose text ends with a URL that has a query (a sibling's "no
// answer from https://…?page=2"); the base wraps it as Go errors chain
// texts, "%w: more" or "%w; more". The sanitized message keeps the ':' or
// ';' after the redacted value, and shows the cause once.
func TestTheCallersCauseEndingInAURLIsToldOnce(t *testing.T) {
	for _, format := range []string{"%w: giving up", "%w; giving up"} {
		t.Run(format, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cause := errors.New("no answer from http://sib.test/v1/items?page=2")
				err := canceledInFlight(t, cause, func(e error) error { return fmt.Errorf(format, e) })
				if !errors.Is(err, cause) {
					t.Fatalf("setup: err %v; want the caller's cause", err)
				}
				told := "no answer from http://sib.test/v1/items?page=REDACTED"
				if n := strings.Count(err.Error(), told); n != 1 {
					t.Errorf("the caller's cause is told %d times; want once\n  err: %v", n, err)
				}
				if !strings.Contains(err.Error(), told+format[2:]) {
					t.Errorf("the base's text %q lost its separator after the URL\n  err: %v", format, err)
				}
			})
		})
	}
}

// TestTheCallersCauseQuotedByTheBaseIsToldOnce: the base's error wraps
// the caller's cause and prints it quoted, as %q writes an error
// ("aborted by \"sibling shard-7 failed\""): it shows the cause, so the
// message tells it once.
func TestTheCallersCauseQuotedByTheBaseIsToldOnce(t *testing.T) {
	for _, text := range []string{"sibling shard-7 failed", `shard "7" failed`, "shard ß failed"} {
		t.Run(text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cause := errors.New(text)
				err := canceledInFlight(t, cause, func(e error) error {
					return &baseWords{words: fmt.Sprintf("request aborted by %q", e), err: e}
				})
				if !errors.Is(err, cause) {
					t.Fatalf("setup: err %v; want the caller's cause", err)
				}
				if strings.Contains(err.Error(), "the caller's cause") {
					t.Errorf("the caller's cause, quoted by the base, is told again\n  err: %v", err)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("%q", text)) {
					t.Errorf("the base's quoted cause is lost\n  err: %v", err)
				}
			})
		})
	}
}

// canceledInFlight is the error of a GET whose caller cancels with cause
// while its base waits for the answer; the base returns wrap of the
// context's cause, as net/http does (in a bubble of synctest).
func canceledInFlight(t *testing.T, cause error, wrap func(error) error) error {
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	held := make(chan struct{})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		close(held)
		<-r.Context().Done()
		return nil, wrap(context.Cause(r.Context()))
	})
	go func() { <-held; cancel(cause) }()
	_, err := otelretry.NewTransport(base).RoundTrip(get(t, ctx, "http://api.test/items"))
	return err
}

// emptyText is an error whose text is empty: a valid error value (an
// error type of the caller's own with nothing to say), given as the
// context's cause.
type emptyText struct{}

func (emptyText) Error() string { return "" }

// TestACauseWithEmptyTextDoesNotPanic: the caller cancels a GET in flight
// with a cause whose text is empty; the base returns an error that wraps
// the cause (as net/http returns context.Cause) and prints words of its
// own. RoundTrip returns an error, and does not panic: an empty part
// shows nowhere (showsPart).
func TestACauseWithEmptyTextDoesNotPanic(t *testing.T) {
	for name, cause := range map[string]error{
		"errors.New(\"\")":  errors.New(""),
		"a type of its own": emptyText{},
	} {
		for wname, wrap := range map[string]func(error) error{
			"its own words":      func(e error) error { return &baseWords{words: "lookup failed", err: e} },
			"%w after its words": func(e error) error { return fmt.Errorf("lookup failed%w", e) },
		} {
			t.Run(name+" under "+wname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var err error
					func() {
						defer func() {
							if p := recover(); p != nil {
								t.Fatalf("RoundTrip panicked with the caller's empty cause: %v", p)
							}
						}()
						err = canceledInFlight(t, cause, wrap)
					}()
					if !errors.Is(err, cause) {
						t.Errorf("err %v; want the caller's cause", err)
					}
				})
			})
		}
	}
}

// TestASchemelessUserinfoInTheCallersCauseIsRedacted: the caller cancels
// with a cause naming a network-path URL whose userinfo is a token alone
// ("//TOKEN@github.com/o/r.git", as git prints one); the base returns the
// cause, which the attempt's error wraps in parentheses. The token is
// redacted there as anywhere: in the error and the attempt span's status.
func TestASchemelessUserinfoInTheCallersCauseIsRedacted(t *testing.T) {
	const token = "ghp_tok3nSECRETvalue"
	for name, text := range map[string]string{
		"alone":       "//" + token + "@github.com/o/r.git",
		"in prose":    "clone of //" + token + "@github.com/o/r.git failed",
		"with a port": "//" + token + "@10.0.0.1:8443/x",
		"nested":      "clone failed [(//" + token + "@github.com/o/r.git)]",
		"ipv6 host":   "dial //" + token + "@[::1]",
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cause := errors.New(text)
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				held := make(chan struct{})
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					close(held)
					<-r.Context().Done()
					return nil, context.Cause(r.Context())
				})
				go func() { <-held; cancel(cause) }()
				rec, opts := tracingProviders()
				_, err := otelretry.NewTransport(base, opts...).RoundTrip(get(t, ctx, "http://api.test/items"))
				if err == nil || !errors.Is(err, cause) {
					t.Fatalf("setup: err %v", err)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("the token is in the error: %q", err)
				}
				for _, sp := range rec.Ended() {
					if strings.Contains(sp.Status().Description, token) {
						t.Errorf("span %q status: %q", sp.Name(), sp.Status().Description)
					}
				}
			})
		})
	}
}
