// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// FuzzTransportInvariants runs the real transport on scripted timelines,
// with bodies that cannot be replayed or that fail while they are sent,
// and responses whose bodies stall. Whatever happens: nothing panics; a
// timed-out write is sent at most once; no call starts at or after the
// operation deadline and RoundTrip never returns after it; every request
// body is closed exactly once and every response body not returned is
// closed; every attempt event has a status or an error class, never both.
// PrepareFuncs that mutate headers, bodies and the URL run too: what
// reaches the base is exactly the prepared request, apart from the trace
// headers the propagators add.
func FuzzTransportInvariants(f *testing.F) {
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(503), uint16(50), uint16(200), uint8(0), uint8(0))
	f.Add(false, uint16(400), uint16(40), uint16(120), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint8(1), uint8(0))
	f.Add(true, uint16(1000), uint16(900), uint16(0), uint16(1503), uint16(0), uint16(503), uint16(0), uint16(200), uint8(2), uint8(0))
	f.Add(true, uint16(300), uint16(10), uint16(5), uint16(2503), uint16(5), uint16(503), uint16(5), uint16(200), uint8(3), uint8(0))
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(503), uint16(50), uint16(200), uint8(0), uint8(1))
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(2503), uint16(80), uint16(503), uint16(50), uint16(200), uint8(0), uint8(2))
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(503), uint16(50), uint16(200), uint8(0), uint8(3))
	f.Add(false, uint16(400), uint16(40), uint16(120), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, isGet bool, deadlineMs, backoffMs, d1, s1, d2, s2, d3, s3 uint16, bodyKind, prepareKind uint8) {
		// s in 200–599: a response; +1000: its body stalls; +2000: the
		// base fails with a reset; anything else: it hangs.
		step := func(d, s uint16) scripted.Step {
			ms := time.Duration(d) * time.Millisecond
			switch {
			case s >= 200 && s <= 599:
				return scripted.Step{Delay: ms, Status: int(s), Body: "body"}
			case s >= 1200 && s <= 1599:
				return scripted.Step{Delay: ms, Status: int(s - 1000), Body: "b", Stall: true}
			case s >= 2000 && s <= 2999:
				return scripted.Step{Delay: ms, Err: io.ErrUnexpectedEOF}
			}
			return scripted.Step{Hang: true}
		}
		deadline := time.Duration(max(deadlineMs, 1)) * time.Millisecond
		synctest.Test(t, func(t *testing.T) {
			base := scripted.New(step(d1, s1), step(d2, s2), step(d3, s3))
			rec := tracetest.NewSpanRecorder()
			prepared := &preparedRequests{kind: prepareKind % 6}
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithDeadline(deadline), otelretry.WithAttemptTimeout(time.Duration(d1%300+1)*time.Millisecond),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Duration(backoffMs)*time.Millisecond)), otelretry.WithoutBudget(),
				otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithPrepareAttempt(prepared.prepare))
			method := http.MethodPost
			if isGet {
				method = http.MethodPut // a write declared idempotent, so that it has a body and retries
			}
			bodies := &countedBodies{getBodyOK: -1}
			var req *http.Request
			switch bodyKind % 4 {
			case 0: // replayable
				req = bodies.request(t, t.Context(), method, true)
			case 1: // not replayable
				req = bodies.request(t, t.Context(), method, false)
			case 2: // GetBody fails on the first retry
				bodies.getBodyOK = 0
				req = bodies.request(t, t.Context(), method, true)
			case 3: // the body fails while it is sent
				req = bodies.request(t, t.Context(), method, true)
				req.Body = &failingCountedBody{req.Body.(*countedBody)}
			}
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if took := time.Since(start); took > deadline {
				t.Fatalf("RoundTrip returned after %v, past the %v deadline", took, deadline)
			}
			if resp != nil {
				resp.Body.Close()
			} else if err == nil {
				t.Fatal("neither a response nor an error")
			}
			calls := base.Calls()
			for i, c := range calls {
				if !c.At.Before(start.Add(deadline)) {
					t.Fatalf("call %d started at +%v, at or past the %v deadline", i+1, c.At.Sub(start), deadline)
				}
			}
			if !isGet && len(calls) > 1 {
				t.Fatalf("a write was sent %d times without a state check or contract", len(calls))
			}
			if !isGet && errors.Is(err, otelretry.ErrOutcomeUnknown) && len(calls) != 1 {
				t.Fatalf("a timed-out write was sent %d times", len(calls))
			}
			bodies.check(t)
			prepared.check(t, calls)
			if n := base.OpenBodies(); n != 0 {
				t.Fatalf("%d response bodies left open", n)
			}
			for _, s := range spantest.Attempts(rec.Ended()) {
				readEvent(t, s) // fails on a status and an error class together, or neither
			}
		})
	})
}

// failingCountedBody is a counted body whose reads fail: a request body
// that breaks while it is being sent.
type failingCountedBody struct{ *countedBody }

func (b *failingCountedBody) Read([]byte) (int, error) { return 0, errors.New("disk read error") }

// preparedRequests is a PrepareFunc that mutates each attempt's request in
// one of several ways, and remembers what it prepared, so that the calls
// the base received can be held to it.
type preparedRequests struct {
	kind uint8 // 0: nothing; 1: headers; 2: the body; 3: the URL's query; 4: all three; 5: the method
	mu   sync.Mutex
	seen map[string]scripted.Call // by X-Prepared
}

func (p *preparedRequests) prepare(r *http.Request, n int) error {
	if p.kind == 0 {
		return nil
	}
	id := strconv.Itoa(n)
	r.Header.Set("X-Prepared", id)
	body := []byte(nil)
	if p.kind == 1 || p.kind == 4 {
		r.Header.Set("Authorization", "Bearer token-"+id)
		r.Header.Del("X-Caller")
	}
	if p.kind == 2 || p.kind == 4 {
		body = []byte("prepared-" + id)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	if p.kind == 3 || p.kind == 4 {
		r.URL.RawQuery = "X-Amz-Signature=sig-" + id
	}
	if p.kind == 5 {
		r.Method = http.MethodPatch // changes what the policy judged: prepare_failed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]scripted.Call{}
	}
	p.seen[id] = scripted.Call{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: body}
	return nil
}

func (p *preparedRequests) check(t *testing.T, calls []scripted.Call) {
	t.Helper()
	if p.kind == 0 {
		return
	}
	if p.kind == 5 && len(calls) > 0 {
		t.Fatalf("a prepared request whose method changed was sent %d times", len(calls))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range calls {
		want, ok := p.seen[c.Header.Get("X-Prepared")]
		if !ok {
			t.Fatalf("call %d was not a prepared request: %v", i+1, c.Header)
		}
		got := c.Header.Clone()
		for _, h := range []string{"Traceparent", "Tracestate", "Baggage"} {
			got.Del(h)
		}
		if c.Method != want.Method || c.URL != want.URL || fmt.Sprint(got) != fmt.Sprint(want.Header) ||
			(want.Body != nil && !bytes.Equal(c.Body, want.Body)) {
			t.Fatalf("call %d: the base received %s %s %v %q; the PrepareFunc prepared %s %s %v %q",
				i+1, c.Method, c.URL, got, c.Body, want.Method, want.URL, want.Header, want.Body)
		}
	}
}
