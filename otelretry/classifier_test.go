// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A classifier's Retryable widens what is retried; it never turns an
// error that proves the request was not processed into a stop: a refused
// POST, which never left and which the defaults retry, is still retried.
func TestClassifierRetryableNeverNarrowsNotProcessed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		h := newHarness(t, []scripted.Step{{Err: refused}, {Status: 201}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Err != nil {
					return otelretry.Retryable(0)
				}
				return otelretry.Classification{}
			}))
		resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		if err != nil {
			t.Fatalf("err = %v: a refused POST that never left was not retried", err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("calls = %d, want 2", n)
		}
	})
}

// Every failed attempt counts against the retry budget alike, whatever
// made it retryable: answers a classifier retries cost a token as the
// statuses of WithRetryableStatuses do.
func TestClassifierRetriesCostTheBudget(t *testing.T) {
	const operations = 100
	calls := func(opts ...otelretry.Option) int {
		var n int
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 500}}, append([]otelretry.Option{
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, opts...)...)
			for range operations {
				resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
				if err == nil {
					resp.Body.Close()
				}
			}
			n = len(h.base.Calls())
		})
		return n
	}
	byStatus := calls(otelretry.WithRetryableStatuses(500))
	byClassifier := calls(otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode == 500 {
			return otelretry.Retryable(0)
		}
		return otelretry.Classification{}
	}))
	if byClassifier != byStatus {
		t.Errorf("an outage of %d operations made %d calls when a classifier retried 500 and %d when WithRetryableStatuses did: the budget must count both alike",
			operations, byClassifier, byStatus)
	}
}

// NotProcessed without protocol evidence is the user's word: it is
// honoured, but the observed class (timeout) stays on spans and metrics,
// the reason is classifier, and no retry.evidence.* is invented. With
// evidence, the class is the evidence's.
func TestClassifierNotProcessedKeepsTheObservedClass(t *testing.T) {
	cases := map[string]struct {
		evidence     otelretry.Evidence
		wantClass    attrs.ErrorClass
		wantEvidence bool
	}{
		"without evidence": {otelretry.Evidence{}, attrs.ErrorClassTimeout, false},
		"with evidence": {otelretry.Evidence{Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"},
			attrs.ErrorClassRefusedStream, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Err: errBaseTimeout}, {Status: 201}},
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Err != nil {
							return otelretry.NotProcessed(tc.evidence)
						}
						return otelretry.Classification{}
					}))
				resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				first := h.attempts()[0]
				if got := attrOf(first, attrs.ErrorClassKey).AsString(); got != string(tc.wantClass) {
					t.Errorf("error class = %s, want %s", got, tc.wantClass)
				}
				if got := attrOf(first, attrs.ReasonKey).AsString(); got != string(attrs.ReasonClassifier) {
					t.Errorf("reason = %s, want classifier", got)
				}
				if _, has := spantestAttr(first, attrs.EvidenceProtocolKey); has != tc.wantEvidence {
					t.Errorf("retry.evidence.protocol present = %v, want %v", has, tc.wantEvidence)
				}
			})
		})
	}
}
