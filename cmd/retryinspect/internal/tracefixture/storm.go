// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package tracefixture

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Storm returns the spans of an incident of n operations over a minute,
// in the span model directly (the SDK and a reader would take seconds for
// tens of thousands of spans): four dependencies, one of which
// (inventory.internal, GET) answers 503 for fifteen seconds, so that its
// operations retry up to their attempt limit or deadline; timed-out writes
// to payments.internal ending in check_state; and one operation in 500
// resending a timed-out POST (an unsafe-resend finding). Every operation
// is an operation span with its attempt spans below it, in a trace of its
// own. The same n gives the same spans.
func Storm(n int) []model.Span {
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	base := Base
	const (
		minute     = 60_000 // ms
		stormFrom  = 20_000
		stormUntil = 35_000
		backoff    = 40
	)
	type dep struct {
		server, method, path string
		share                float64
	}
	deps := []dep{
		{"inventory.internal", "GET", "/items", 0.45},
		{"users.internal", "GET", "/users/REDACTED", 0.25},
		{"search.internal", "GET", "/search?q=REDACTED", 0.15},
		{"payments.internal", "POST", "/payments", 0.15},
	}
	spans := make([]model.Span, 0, n*3)
	var spanSeq uint64
	nextSpan := func() string { spanSeq++; return fmt.Sprintf("%016x", spanSeq) }
	str := func(k attribute.Key, v string) model.Attribute {
		return model.Attribute{Key: string(k), Value: model.String(v)}
	}
	num := func(k attribute.Key, v int64) model.Attribute {
		return model.Attribute{Key: string(k), Value: model.Int(v)}
	}

	for i := range n {
		pick, d := rng.Float64(), deps[len(deps)-1]
		for _, c := range deps {
			if pick < c.share {
				d = c
				break
			}
			pick -= c.share
		}
		trace := fmt.Sprintf("%032x", i+1)
		opSpan := nextSpan()
		opID := fmt.Sprintf("op-%s-%d", d.server[:len(d.server)-len(".internal")], i+1)
		start := int64(rng.IntN(minute))
		deadline := int64(400)
		storm := d.server == "inventory.internal" && start >= stormFrom && start < stormUntil
		unsafe := i%500 == 499

		type try struct {
			status     int64
			class      attrs.ErrorClass
			elapsed    int64
			decision   attrs.Decision
			reason     attrs.Reason
			retryAfter int64
		}
		var tries []try
		outcome := attrs.OutcomeReturn
		switch {
		case unsafe:
			d = deps[3]
			opID = fmt.Sprintf("op-payments-%d", i+1)
			deadline = 1000
			tries = []try{
				{class: attrs.ErrorClassTimeout, elapsed: 300, decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableError},
				{status: 201, elapsed: 40, decision: attrs.DecisionReturn, reason: attrs.ReasonResponse},
			}
		case d.method == "POST" && rng.IntN(20) == 0:
			tries = []try{{class: attrs.ErrorClassTimeout, elapsed: 250 + int64(rng.IntN(100)), decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite}}
			outcome = attrs.OutcomeCheckState
		case storm:
			remaining := deadline
			for a := 1; ; a++ {
				el := 60 + int64(rng.IntN(60))
				t := try{status: 503, elapsed: el}
				if rng.IntN(4) == 0 {
					t.status = 200
				}
				after := remaining - el
				switch {
				case t.status == 200:
					t.decision, t.reason = attrs.DecisionReturn, attrs.ReasonResponse
				case after <= backoff:
					t.decision, t.reason, outcome = attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, attrs.OutcomeDeadlineExceeded
				case a == 3:
					t.decision, t.reason, outcome = attrs.DecisionMaxAttempts, attrs.ReasonAttemptLimit, attrs.OutcomeMaxAttempts
				default:
					t.decision, t.reason = attrs.DecisionRetry, attrs.ReasonRetryableStatus
				}
				tries = append(tries, t)
				if t.decision != attrs.DecisionRetry {
					break
				}
				remaining = after - backoff
			}
		default:
			tries = []try{{status: 200, elapsed: 5 + int64(rng.IntN(60)), decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}}
		}

		url := "http://" + d.server + d.path
		at, remaining := start, deadline
		for a, t := range tries {
			as := []model.Attribute{
				str(attrs.OperationIDKey, opID),
				str(attrs.RequestIDKey, fmt.Sprintf("%s/attempt-%d", opID, a+1)),
				num(attrs.AttemptKey, int64(a+1)),
				str(attrs.HTTPRequestMethodKey, d.method),
			}
			if t.status != 0 {
				as = append(as, num(attrs.HTTPResponseStatusCodeKey, t.status))
			} else {
				as = append(as, str(attrs.ErrorClassKey, string(t.class)))
			}
			as = append(as,
				num(attrs.ElapsedMsKey, t.elapsed), num(attrs.RemainingMsKey, remaining),
				str(attrs.DecisionKey, string(t.decision)), str(attrs.ReasonKey, string(t.reason)),
				str(attrs.URLFullKey, url), str(attrs.ServerAddressKey, d.server))
			if t.decision == attrs.DecisionRetry {
				as = append(as, num(attrs.BackoffMsKey, backoff))
			}
			spans = append(spans, model.Span{
				TraceID: trace, SpanID: nextSpan(), ParentID: opSpan, Name: d.method, Kind: model.KindClient,
				Start: base.Add(ms(at)), End: base.Add(ms(at + t.elapsed)), Attributes: as,
			})
			at += t.elapsed + backoff
			remaining -= t.elapsed + backoff
		}
		end := at - backoff + 1
		spans = append(spans, model.Span{
			TraceID: trace, SpanID: opSpan, Name: "retry " + d.method, Kind: model.KindInternal,
			Start: base.Add(ms(start)), End: base.Add(ms(end)),
			Attributes: []model.Attribute{
				str(attrs.OperationIDKey, opID), str(attrs.HTTPRequestMethodKey, d.method),
				str(attrs.URLFullKey, url), str(attrs.ServerAddressKey, d.server),
				num(attrs.AttemptsKey, int64(len(tries))), str(attrs.OutcomeKey, string(outcome)),
				num(attrs.DeadlineMsKey, deadline),
			},
		})
	}
	return spans
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
