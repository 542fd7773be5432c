package otelretry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newAttemptContext(parent context.Context, d time.Duration) *attemptContext {
	c := new(attemptContext)
	c.init(parent, time.Now(), d)
	return c
}

// isDone reports whether ch is closed, without waiting.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// registered is how many AfterFuncs wait on c.
func registered(c *attemptContext) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.afters)
}

type ctxKey struct{}

// Unwatched, the context answers from the clock and the parent: no timer,
// no channel, and still the errors context.WithDeadline would give.
func TestAttemptContextUnwatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := context.WithValue(context.Background(), ctxKey{}, "v")
		c := newAttemptContext(parent, time.Second)
		if d, ok := c.Deadline(); !ok || !d.Equal(time.Now().Add(time.Second)) {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
		if c.Value(ctxKey{}) != "v" {
			t.Errorf("Value does not reach the parent")
		}
		if err := c.Err(); err != nil {
			t.Fatalf("Err before the deadline = %v", err)
		}
		time.Sleep(time.Second)
		if err := c.Err(); err != context.DeadlineExceeded {
			t.Fatalf("Err at the deadline = %v", err)
		}
		if c.timer != nil || !isDone(c.Done()) {
			t.Errorf("a context done before it is watched needs no timer and a closed Done")
		}
		c.release()
		if err := c.Err(); err != context.DeadlineExceeded {
			t.Errorf("release changed Err to %v", err)
		}
		if got := context.Cause(c); got != context.DeadlineExceeded {
			t.Errorf("Cause = %v", got)
		}
	})
}

// Watched, Done closes at the deadline exactly, on the timer.
func TestAttemptContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := newAttemptContext(context.Background(), 300*time.Millisecond)
		<-c.Done()
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("Done closed after %v", got)
		}
		if err := c.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err = %v", err)
		}
	})
}

// The parent's cancellation and cause reach the context, watched or not;
// the watch on the parent ends with the context (no goroutine is left).
func TestAttemptContextParentCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cause := errors.New("user left")
		for _, watched := range []bool{false, true} {
			parent, cancel := context.WithCancelCause(context.Background())
			c := newAttemptContext(parent, time.Hour)
			if watched {
				c.Done()
			}
			cancel(cause)
			synctest.Wait()
			if watched && !isDone(c.Done()) {
				t.Errorf("watched: Done is open after the parent was canceled")
			}
			if err := c.Err(); err != context.Canceled {
				t.Errorf("watched %v: Err = %v", watched, err)
			}
			if got := context.Cause(c); got != cause {
				t.Errorf("watched %v: Cause = %v", watched, got)
			}
		}
	})
}

// release cancels, stops the timer and the parent watch, and is idempotent.
func TestAttemptContextRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newAttemptContext(parent, time.Hour)
		done := c.Done()
		c.release()
		c.release()
		if !isDone(done) || c.Err() != context.Canceled {
			t.Fatalf("after release: done %v, Err %v", isDone(done), c.Err())
		}
		time.Sleep(2 * time.Hour) // the timer, stopped, must not change Err
		if c.Err() != context.Canceled {
			t.Errorf("Err = %v", c.Err())
		}
	})
}

// A context derived with context.WithCancel registers through AfterFunc
// (no goroutine per request) and is canceled with this one.
func TestAttemptContextChild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newAttemptContext(context.Background(), time.Second)
		child, cancel := context.WithCancel(c)
		defer cancel()
		if n := registered(c); n != 1 {
			t.Fatalf("WithCancel registered %d AfterFuncs, want 1", n)
		}
		<-child.Done()
		if child.Err() != context.DeadlineExceeded {
			t.Errorf("child Err = %v", child.Err())
		}

		// A canceled child unregisters; a stop after the fact reports false.
		c2 := newAttemptContext(context.Background(), time.Second)
		child2, cancel2 := context.WithCancel(c2)
		cancel2()
		if n := registered(c2); n != 0 || child2.Err() != context.Canceled {
			t.Errorf("canceled child: %d AfterFuncs left, Err %v", n, child2.Err())
		}
		ran := make(chan struct{})
		stop := c2.AfterFunc(func() { close(ran) })
		c2.release()
		<-ran
		if stop() {
			t.Errorf("stop after the function ran reported true")
		}
		// On a done context, AfterFunc runs f at once.
		ran2 := make(chan struct{})
		c2.AfterFunc(func() { close(ran2) })
		<-ran2
	})
}

// Concurrent watchers, errors and release under -race.
func TestAttemptContextConcurrent(t *testing.T) {
	c := newAttemptContext(context.Background(), time.Hour)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = c.Err()
			select {
			case <-c.Done():
			case <-time.After(10 * time.Millisecond):
			}
			_ = c.Err()
		})
	}
	c.release()
	wg.Wait()
	if c.Err() != context.Canceled {
		t.Errorf("Err = %v", c.Err())
	}
}

// newHangingServer starts a loopback server that answers no request until
// its client gives up or the test ends.
func newHangingServer(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv
}

// A real http.Transport waits on the context: an attempt to a server that
// never answers ends at the attempt deadline with DeadlineExceeded.
func TestAttemptContextWithHTTPTransport(t *testing.T) {
	srv := newHangingServer(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := newAttemptContext(context.Background(), 50*time.Millisecond)
	defer c.release()
	req, _ := http.NewRequestWithContext(c, http.MethodGet, srv.URL, nil)
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RoundTrip error = %v, want context.DeadlineExceeded", err)
	}
}

// The attempt context answers as context.WithDeadline and its cancel
// function do, step by step, whether or not it is watched. (Its deadline
// is never later than its parent's: the transport derives it from the
// operation deadline, which is not later than the caller's.)
func TestAttemptContextMatchesWithDeadline(t *testing.T) {
	type observed struct {
		err, cause error
		done       bool
	}
	// Done is read first: Err looks at the clock and the parent itself, so
	// reading it first would hide a late timer.
	observe := func(ctx context.Context, watched bool) observed {
		var o observed
		if watched {
			o.done = isDone(ctx.Done())
		}
		o.err, o.cause = ctx.Err(), context.Cause(ctx)
		if !watched {
			o.done = o.err != nil
		}
		return o
	}
	cause := errors.New("caller gave up")
	// A step lets time pass, then acts on both contexts alike.
	type step struct {
		name  string
		sleep time.Duration
		act   func(cancelParent context.CancelCauseFunc, release func())
	}
	nothing := func(context.CancelCauseFunc, func()) {}
	release := func(_ context.CancelCauseFunc, release func()) { release() }
	cancelParent := func(cancel context.CancelCauseFunc, _ func()) { cancel(cause) }
	scenarios := map[string][]step{
		"deadline passes": {
			{"before", time.Second - time.Nanosecond, nothing},
			{"at the deadline", time.Nanosecond, nothing},
			{"released after", 0, release},
		},
		"released early": {
			{"released", 0, release},
			{"deadline passes", 2 * time.Second, nothing},
		},
		"parent canceled": {
			{"canceled", time.Millisecond, cancelParent},
			{"released after", 0, release},
			{"deadline passes", 2 * time.Second, nothing},
		},
	}
	for name, steps := range scenarios {
		for _, watched := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				stdParent, stdCancelParent := context.WithCancelCause(context.Background())
				ourParent, ourCancelParent := context.WithCancelCause(context.Background())
				std, stdRelease := context.WithDeadline(stdParent, time.Now().Add(time.Second))
				ours := newAttemptContext(ourParent, time.Second)
				defer stdRelease()
				defer ours.release()
				defer stdCancelParent(nil)
				defer ourCancelParent(nil)
				if watched { // from the start, as http.Transport does
					std.Done()
					ours.Done()
				}
				for _, s := range steps {
					time.Sleep(s.sleep)
					s.act(stdCancelParent, stdRelease)
					s.act(ourCancelParent, ours.release)
					synctest.Wait()
					if got, want := observe(ours, watched), observe(std, watched); got != want {
						t.Errorf("%s (watched %v), %s: got %+v, context.WithDeadline gives %+v", name, watched, s.name, got, want)
					}
				}
			})
		}
	}
}

// Nested transports nest attempt contexts: the inner operation's contexts
// hang from the outer attempt's, each watching its parent through the
// other's AfterFunc. Both attempts of the outer operation must end at its
// attempt timeout, with no deadlock between the two contexts' locks and no
// goroutine left (goleak).
func TestAttemptContextsNest(t *testing.T) {
	srv := newHangingServer(t)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	inner := NewTransport(base, WithMaxAttempts(1))
	outer := NewTransport(inner, WithAttemptTimeout(50*time.Millisecond), WithMaxAttempts(2),
		WithBackoff(ConstantBackoff(time.Millisecond)), WithDeadline(5*time.Second))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	_, err := outer.RoundTrip(req)
	var rerr *Error
	if !errors.As(err, &rerr) || rerr.Attempts != 2 || rerr.Outcome != "max_attempts" {
		t.Fatalf("err = %v, want max_attempts after 2 attempts", err)
	}
}
