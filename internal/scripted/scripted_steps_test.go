// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package scripted_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
)

func get(t *testing.T, ctx context.Context) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://dependency.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Step.Delay: "how long the call takes before answering": exactly, on
// virtual time.
func TestAStepTakesExactlyItsDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusOK})
		start := time.Now()
		resp, err := rt.RoundTrip(get(t, t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); took != 5*time.Millisecond {
			t.Errorf("the call took %v, want its Delay, 5ms", took)
		}
		if at := rt.Calls()[0].At; !at.Equal(start) {
			t.Errorf("the call is recorded at %v, want when it began, %v", at, start)
		}
	})
}

// Step.Delay: "When the request context ends first, the call fails with
// the context's error, as a real transport would."
func TestADelayEndsWithTheRequestContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := scripted.New(scripted.Step{Delay: 5 * time.Millisecond, Status: http.StatusOK})
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		start := time.Now()
		resp, err := rt.RoundTrip(get(t, ctx))
		if resp != nil {
			resp.Body.Close()
			t.Errorf("got a response %d, want none", resp.StatusCode)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the context's deadline", err)
		}
		if took := time.Since(start); took != time.Millisecond {
			t.Errorf("the call took %v, want 1ms, when its context ended", took)
		}
	})
}

// Step.Hang: "blocks until the request context ends (a timeout)."
func TestAHangingStepEndsOnlyWithTheRequestContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := scripted.New(scripted.Step{Hang: true, Status: http.StatusOK})
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		start := time.Now()
		resp, err := rt.RoundTrip(get(t, ctx))
		if resp != nil {
			resp.Body.Close()
			t.Errorf("got a response %d, want none", resp.StatusCode)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the context's deadline", err)
		}
		if took := time.Since(start); took != time.Hour {
			t.Errorf("the call returned after %v, want an hour, when its context ended", took)
		}
	})
}

// Step.Stall: "makes the response body deliver Body, then block until
// the request context ends, as a net/http body whose server stopped
// sending does."
func TestAStalledBodyDeliversItsBodyThenBlocksUntilTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := scripted.New(scripted.Step{Status: http.StatusOK, Body: "partial", Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		resp, err := rt.RoundTrip(get(t, ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.ContentLength != -1 {
			t.Errorf("ContentLength = %d, want -1 (unknown) for a stalled body", resp.ContentLength)
		}
		start := time.Now()
		got, err := io.ReadAll(resp.Body)
		if string(got) != "partial" {
			t.Errorf("read %q, want the Body, %q", got, "partial")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("reading ended with %v, want the context's deadline", err)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("reading ended after %v, want 1s, when the context ended", took)
		}
	})
}

// OpenBodies: "how many response bodies were handed out and not closed
// yet."
func TestOpenBodiesCountsTheBodiesNotClosed(t *testing.T) {
	rt := scripted.New(scripted.Step{Status: http.StatusOK, Body: "ok"})
	a, err := rt.RoundTrip(get(t, t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.RoundTrip(get(t, t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if n := rt.OpenBodies(); n != 2 {
		t.Errorf("OpenBodies = %d with two bodies open, want 2", n)
	}
	a.Body.Close()
	a.Body.Close() // a second Close counts once
	if n := rt.OpenBodies(); n != 1 {
		t.Errorf("OpenBodies = %d with one body closed (twice), want 1", n)
	}
	b.Body.Close()
	if n := rt.OpenBodies(); n != 0 {
		t.Errorf("OpenBodies = %d with both bodies closed, want 0", n)
	}
}

// Calls: "returns a copy of the calls received so far", and a Call is
// "what the transport saw": what the caller does afterwards changes
// neither.
func TestCallsIsACopyOfWhatTheTransportSaw(t *testing.T) {
	rt := scripted.New(scripted.Step{Status: http.StatusOK})
	req := get(t, t.Context())
	req.Header.Set("X-Seen", "sent")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req.Header.Set("X-Seen", "changed after")

	calls := rt.Calls()
	calls[0].Method = "CHANGED"
	again := rt.Calls()
	if again[0].Method != http.MethodGet {
		t.Errorf("changing what Calls returned changed the record: Method %q", again[0].Method)
	}
	if got := again[0].Header.Get("X-Seen"); got != "sent" {
		t.Errorf("the recorded header is %q, want what was sent, %q", got, "sent")
	}
}

// Step.AlsoErr: "returns this error together with the response".
func TestAlsoErrIsReturnedWithTheResponse(t *testing.T) {
	both := errors.New("both")
	rt := scripted.New(scripted.Step{Status: http.StatusOK, AlsoErr: both})
	resp, err := rt.RoundTrip(get(t, t.Context()))
	if resp == nil {
		t.Fatal("no response, want one with the error")
	}
	resp.Body.Close()
	if err != both {
		t.Errorf("err = %v, want %v together with the response", err, both)
	}
}

// Step.Panic: "makes the call panic with this value after Delay".
func TestAPanickingStepPanicsWithItsValue(t *testing.T) {
	rt := scripted.New(scripted.Step{Panic: "scripted panic"})
	var p any
	func() {
		defer func() { p = recover() }()
		resp, _ := rt.RoundTrip(get(t, t.Context()))
		if resp != nil {
			resp.Body.Close()
		}
	}()
	if p != "scripted panic" {
		t.Errorf("recovered %v, want the step's value", p)
	}
}

type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }
func (failingBody) Close() error               { return nil }

// A request body that fails while it is read fails the call, "as
// net/http does when the body fails while it is written"; the call is
// still recorded.
func TestABodyThatFailsFailsTheCall(t *testing.T) {
	broken := errors.New("broken body")
	rt := scripted.New(scripted.Step{Status: http.StatusOK})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://dependency.test/", failingBody{broken})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
		t.Errorf("got a response %d, want none", resp.StatusCode)
	}
	if err != broken {
		t.Errorf("err = %v, want the body's %v", err, broken)
	}
	if n := len(rt.Calls()); n != 1 {
		t.Errorf("%d calls recorded, want 1", n)
	}
}
