package otelretry_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// FuzzTransportInvariants runs the real transport on scripted timelines:
// a timed-out write is sent at most once, and no attempt starts at or after
// the operation deadline.
func FuzzTransportInvariants(f *testing.F) {
	f.Add(true, uint16(400), uint16(40), uint16(80), uint16(503), uint16(80), uint16(503), uint16(50), uint16(200))
	f.Add(false, uint16(400), uint16(40), uint16(120), uint16(0), uint16(0), uint16(0), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, isGet bool, deadlineMs, backoffMs, d1, s1, d2, s2, d3, s3 uint16) {
		step := func(d, s uint16) scripted.Step {
			if s < 200 || s > 599 {
				return scripted.Step{Hang: true}
			}
			return scripted.Step{Delay: time.Duration(d) * time.Millisecond, Status: int(s)}
		}
		deadline := time.Duration(max(deadlineMs, 1)) * time.Millisecond
		synctest.Test(t, func(t *testing.T) {
			base := scripted.New(step(d1, s1), step(d2, s2), step(d3, s3))
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(noop.NewTracerProvider()),
				otelretry.WithDeadline(deadline), otelretry.WithAttemptTimeout(time.Duration(d1%300+1)*time.Millisecond),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Duration(backoffMs)*time.Millisecond)), otelretry.WithoutBudget())
			method := http.MethodPost
			if isGet {
				method = http.MethodGet
			}
			start := time.Now()
			req, _ := http.NewRequestWithContext(t.Context(), method, "http://api.test/", http.NoBody)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			calls := base.Calls()
			for i, c := range calls {
				if !c.At.Before(start.Add(deadline)) {
					t.Fatalf("call %d started at +%v, at or past the %v deadline", i+1, c.At.Sub(start), deadline)
				}
			}
			if time.Since(start) > deadline {
				t.Fatalf("operation took %v, past the %v deadline", time.Since(start), deadline)
			}
			if !isGet && errors.Is(err, otelretry.ErrOutcomeUnknown) && len(calls) != 1 {
				t.Fatalf("a timed-out write was sent %d times", len(calls))
			}
			if !isGet && len(calls) > 1 {
				t.Fatalf("a write was sent %d times without a state check or contract", len(calls))
			}
		})
	})
}
