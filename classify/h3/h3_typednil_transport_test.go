// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The chain Evidence reads past (a typed nil *http3.Error beside
// H3_REQUEST_REJECTED) is read past by the Transport h3.Classify is
// installed on too: the rejected POST is resent and answered (a
// reviewer's find: the Transport panicked on the nil receiver first).
func TestATypedNilThroughTheTransportIsReadPast(t *testing.T) {
	rejected := &quic.StreamError{StreamID: 4, ErrorCode: quic.StreamErrorCode(http3.ErrCodeRequestRejected), Remote: true}
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, errors.Join((*http3.Error)(nil), rejected)
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify), otelretry.WithMaxAttempts(3))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://api.test/", strings.NewReader("x"))
	var resp *http.Response
	var err error
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		resp, err = tr.RoundTrip(req)
	}()
	if recovered != nil {
		t.Fatalf("RoundTrip panicked: %v (after %d calls); want the rejected POST resent", recovered, calls.Load())
	}
	if err != nil {
		t.Fatalf("RoundTrip: %v (after %d calls)", err, calls.Load())
	}
	resp.Body.Close()
	if n := calls.Load(); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}
