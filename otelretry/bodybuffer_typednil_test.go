// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// typedNilBody fails its Read with err.
type typedNilBody struct{ err error }

func (b typedNilBody) Read([]byte) (int, error) { return 0, b.err }
func (typedNilBody) Close() error               { return nil }

// A caller's request body whose read fails with an error holding a typed
// nil (a body streamed from an HTTP/3 download, say) ends the operation
// with an error before any call, as any broken body does; RoundTrip does
// not panic (the error goes behind the stand-in where it is sanitized;
// it panicked before).
func TestACallersBodyErrorHoldingATypedNilIsReadPast(t *testing.T) {
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/", nil)
	req.Body = typedNilBody{errors.Join(io.ErrUnexpectedEOF, (*receiverReadingError)(nil))}
	req.ContentLength = 10
	var err error
	returned, recovered := onAGoroutine(func() {
		resp, e := tr.RoundTrip(req)
		if e == nil {
			resp.Body.Close()
		}
		err = e
	})
	if !returned {
		t.Fatalf("RoundTrip panicked: %v", recovered)
	}
	if err == nil {
		t.Fatalf("nil error after %d calls; want the broken body's", calls.Load())
	}
	_ = err.Error()
}
