// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
)

// statusSpan is a span that keeps the status it was given.
type statusSpan struct {
	noop.Span
	code codes.Code
	desc string
	set  bool
}

func (s *statusSpan) SetStatus(c codes.Code, d string) { s.code, s.desc, s.set = c, d, true }

// The transport's own attempt span gets its status as otelhttp gives a
// CLIENT span's: an error for every answer from 400 on (a 4xx as much as a
// 5xx) and for every error class; none for a success or a superseded
// attempt.
func TestAttemptSpanStatusCoversClientErrors(t *testing.T) {
	cases := []struct {
		name string
		ev   attemptEvent
		want codes.Code
		desc string
	}{
		{"400", attemptEvent{status: 400}, codes.Error, http.StatusText(400)},
		{"404", attemptEvent{status: 404}, codes.Error, http.StatusText(404)},
		{"429", attemptEvent{status: 429}, codes.Error, http.StatusText(429)},
		{"499", attemptEvent{status: 499}, codes.Error, ""},
		{"503", attemptEvent{status: 503}, codes.Error, http.StatusText(503)},
		{"timeout", attemptEvent{class: attrs.ErrorClassTimeout}, codes.Error, string(attrs.ErrorClassTimeout)},
		{"200", attemptEvent{status: 200}, codes.Unset, ""},
		{"399", attemptEvent{status: 399}, codes.Unset, ""},
		{"superseded", attemptEvent{class: attrs.ErrorClassRaceLost, verdict: verdict{decision: attrs.DecisionSuperseded}}, codes.Unset, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &statusSpan{}
			setAttemptStatus(s, &tc.ev)
			if s.code != tc.want || s.desc != tc.desc {
				t.Errorf("status = %v %q, want %v %q", s.code, s.desc, tc.want, tc.desc)
			}
		})
	}
}
