// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
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
func FuzzTransportInvariants(f *testing.F) {
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(503), uint16(50), uint16(200), uint8(0))
	f.Add(false, uint16(400), uint16(40), uint16(120), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0), uint8(1))
	f.Add(true, uint16(1000), uint16(900), uint16(0), uint16(1503), uint16(0), uint16(503), uint16(0), uint16(200), uint8(2))
	f.Add(true, uint16(300), uint16(10), uint16(5), uint16(2503), uint16(5), uint16(503), uint16(5), uint16(200), uint8(3))
	f.Fuzz(func(t *testing.T, isGet bool, deadlineMs, backoffMs, d1, s1, d2, s2, d3, s3 uint16, bodyKind uint8) {
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
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithDeadline(deadline), otelretry.WithAttemptTimeout(time.Duration(d1%300+1)*time.Millisecond),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Duration(backoffMs)*time.Millisecond)), otelretry.WithoutBudget(),
				otelretry.WithIdempotentMethods(http.MethodPut))
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
