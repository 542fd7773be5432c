// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Only REFUSED_STREAM is proof (h2.go's package doc: "Everything else
// leaves the outcome unknown"). TestEvidenceByCode checks three codes;
// every other one, a server's (remote) included, must prove nothing.
func TestEveryCodeButRefusedStreamProvesNothing(t *testing.T) {
	for code := http2.ErrCode(0); code <= 0x20; code++ {
		if code == http2.ErrCodeRefusedStream {
			continue
		}
		for _, err := range []error{
			http2.StreamError{StreamID: 1, Code: code},
			fmt.Errorf("round trip: %w", http2.StreamError{StreamID: 3, Code: code, Cause: errors.New("from peer")}),
		} {
			if ev, ok := h2.Evidence(err); ok {
				t.Errorf("Evidence(%v) = %+v, true; only REFUSED_STREAM is proof", err, ev)
			}
			if got := h2.Classify(otelretry.Answer{Err: err}); got != (otelretry.Classification{}) {
				t.Errorf("Classify(%v) = %+v; want the zero Classification", err, got)
			}
		}
	}
}

// asStreamError converts itself into a stream error as net/http's own
// (unexported) HTTP/2 stream error does.
type asStreamError struct{ code http2.ErrCode }

func (e asStreamError) Error() string { return "stream error: " + e.code.String() }

func (e asStreamError) As(target any) bool {
	if p, ok := target.(*http2.StreamError); ok {
		*p = http2.StreamError{StreamID: 5, Code: e.code}
		return true
	}
	return false
}

// Evidence's godoc: "The chain is read as errors.As reads it, the first
// stream error found deciding". A CANCEL found first is the answer; a
// REFUSED_STREAM after it in the tree (a join, a second %w) proves nothing
// of this request: the server may have processed the stream it cancelled.
func TestAStreamErrorAfterTheFirstDecidesNothing(t *testing.T) {
	cancel := http2.StreamError{StreamID: 1, Code: http2.ErrCodeCancel}
	refused := http2.StreamError{StreamID: 3, Code: http2.ErrCodeRefusedStream}
	for name, err := range map[string]error{
		"join":             errors.Join(cancel, refused),
		"errorf":           fmt.Errorf("%w; then %w", cancel, refused),
		"wrapped join":     fmt.Errorf("x: %w", errors.Join(errors.New("other"), cancel, refused)),
		"As method first":  errors.Join(asStreamError{http2.ErrCodeCancel}, refused),
		"As method second": errors.Join(cancel, asStreamError{http2.ErrCodeRefusedStream}),
	} {
		var se http2.StreamError
		if !errors.As(err, &se) || se.Code != http2.ErrCodeCancel {
			t.Fatalf("%s: errors.As finds %v first; the test expects CANCEL", name, se.Code)
		}
		if ev, ok := h2.Evidence(err); ok {
			t.Errorf("%s: Evidence = %+v, true; the first stream error (CANCEL) decides", name, ev)
		}
	}
	// The converse: a refusal found first is read, past a later CANCEL.
	if _, ok := h2.Evidence(errors.Join(asStreamError{http2.ErrCodeRefusedStream}, cancel)); !ok {
		t.Error("a first REFUSED_STREAM (by As) before a CANCEL: no proof; errors.As finds the refusal first")
	}
}

// Classify's godoc: "an attempt that got no response because the server
// refused its stream (REFUSED_STREAM) is NotProcessed ...; any other
// answer gets the zero Classification." An answer with a status got a
// response: whatever error rides along, it is no proof.
func TestAnAnswerWithAStatusIsNoProof(t *testing.T) {
	refused := http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		if got := h2.Classify(otelretry.Answer{StatusCode: status, Err: refused}); got != (otelretry.Classification{}) {
			t.Errorf("Classify(status %d, REFUSED_STREAM) = %+v; want the zero Classification", status, got)
		}
	}
}
