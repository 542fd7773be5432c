// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// errBody is a body whose Read returns err.
type errBody struct{ err error }

func (b errBody) Read([]byte) (int, error) { return 0, b.err }
func (b errBody) Close() error             { return nil }

// timeoutOver is a net.Error that wraps another error.
type timeoutOver struct{ inner error }

func (e timeoutOver) Error() string   { return "read stalled" }
func (e timeoutOver) Timeout() bool   { return true }
func (e timeoutOver) Temporary() bool { return true }
func (e timeoutOver) Unwrap() error   { return e.inner }

type quietNil struct{}

func (*quietNil) Error() string { return "quiet" }

func readErrorOf(t *testing.T, bodyErr error) error {
	t.Helper()
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: errBody{bodyErr}, Request: r}, nil
	})
	_, opts := tracingProviders()
	opts = append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(10*time.Second))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:1/x", nil)
	resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return err
}

// A body read error sanitizing leaves as it is is returned itself
// (sanitizedReadError's promise), also when its tree is large (a
// reviewer's find).
func TestALargeBodyErrorTreeIsReturnedItself(t *testing.T) {
	var errs []error
	for i := range 300 {
		errs = append(errs, fmt.Errorf("part %d", i))
	}
	big := errors.Join(errs...)
	got := readErrorOf(t, big)
	if got != big {
		t.Errorf("read error is %T, not the body's own error (==)", got)
	}
}

// A body read error that is a net.Error stays one (sanitizedReadError's
// promise), also when a typed nil is below it (a reviewer's find: the
// stand-in was no net.Error).
func TestABodyNetErrorOverATypedNilStaysANetError(t *testing.T) {
	for name, inner := range map[string]error{"non-nil": &quietNil{}, "typed nil": (*quietNil)(nil)} {
		t.Run(name, func(t *testing.T) {
			got := readErrorOf(t, timeoutOver{inner})
			ne, ok := got.(net.Error)
			if !ok || !ne.Timeout() {
				t.Errorf("read error %T (%v) is no net.Error timeout", got, got)
			}
		})
	}
}

var _ = strings.Contains
