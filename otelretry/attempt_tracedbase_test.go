// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A base that is not net/http's Transport (one routing by r.Host over a
// socket of its own, so its requests carry no URL host) and that reads
// the request's ClientTrace, as any instrumented transport may, is not
// net/http refusing the request: its transient failure (an errors.New
// connection reset) is a transport error, retried (decisions.md row 27),
// as it is when the same base does not read the trace. Taking any base
// that asked for the trace for net/http's Transport (to know it below
// otelhttp's) stopped this GET invalid_request after one call.
func TestATracedCustomBasesFailureIsNotARefusal(t *testing.T) {
	for _, readsTrace := range []bool{false, true} {
		name := "reads no trace"
		if readsTrace {
			name = "reads the trace"
		}
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if readsTrace {
					if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.DNSStart != nil {
						tr.DNSStart(httptrace.DNSStartInfo{Host: r.Host})
					}
				}
				if calls.Add(1) == 1 {
					return nil, errors.New("connection reset by peer")
				}
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			req := get(t, t.Context(), "http://svc/v1/items")
			req.URL.Host = "" // routed by req.Host, as over a unix socket
			answeredAfterARetry(t, tr, req, &calls)
		})
	}
}

// A base of one's own that never reads the request's ClientTrace and
// sends what net/http's Transport would refuse (it cleans a header value
// of its control characters first) is not net/http refusing the request:
// its transient failure is retried (row 27), as
// TestATracedCustomBasesFailureIsNotARefusal says for a base that reads no
// trace. A PrepareAttemptFunc that fetches something (a token) with plain
// net/http and the attempt's context is no layer below the transport, yet
// its call asked the attempt's context for its ClientTrace, and the base
// was taken for net/http's Transport: only an ask once the attempt was
// sent tells of the base now.
func TestAPrepareCallDoesNotMakeACustomBaseNetHTTP(t *testing.T) {
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tok") }))
	defer tokenSrv.Close()
	side := &http.Transport{}
	defer side.CloseIdleConnections()
	for _, nested := range []bool{false, true} {
		name := "no call in the PrepareAttemptFunc"
		if nested {
			name = "a net/http call in the PrepareAttemptFunc"
		}
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return cleanedOnceFailing(r, &calls)
			})
			prep := func(r *http.Request, attempt int) error {
				if !nested {
					return nil
				}
				tr, err := http.NewRequestWithContext(r.Context(), http.MethodGet, tokenSrv.URL, nil)
				if err != nil {
					return err
				}
				resp, err := (&http.Client{Transport: side}).Do(tr)
				if err != nil {
					return err
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				r.Header.Set("Authorization", "Bearer "+string(b))
				return nil
			}
			tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithPrepareAttempt(prep))
			answeredAfterARetry(t, tr, noteGET(t), &calls)
		})
	}
}

// A base of one's own that never reads the request's ClientTrace, cleans
// a header net/http would refuse, and fetches a token with the request's
// context through an otelretry Transport over net/http (a call the base
// makes with its request's context is an operation of its own, see the
// boundary) is not net/http's Transport: its transient failure is retried
// (row 27), as TestAPrepareCallDoesNotMakeACustomBaseNetHTTP says for the
// same base. The inner net/http asks the inner attempt's context for its
// ClientTrace, and the inner wire's callerTrace asks the outer attempt's
// context for its own, once the outer attempt is live: the outer wire
// took that for a layer below it asking (askedLive), and the base's
// failure was stopped invalid_request. That lookup is told apart now
// (wire.probing).
func TestABasesOwnOtelretryCallDoesNotMakeItNetHTTP(t *testing.T) {
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tok") }))
	defer tokenSrv.Close()
	side := &http.Transport{}
	defer side.CloseIdleConnections()
	for _, through := range []string{"no call", "plain net/http", "otelretry over net/http"} {
		t.Run(through, func(t *testing.T) {
			var client *http.Client
			switch through {
			case "plain net/http":
				client = &http.Client{Transport: side}
			case "otelretry over net/http":
				client = &http.Client{Transport: otelretry.NewTransport(side)}
			}
			var calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if client != nil {
					tr, err := http.NewRequestWithContext(r.Context(), http.MethodGet, tokenSrv.URL, nil)
					if err != nil {
						return nil, err
					}
					resp, err := client.Do(tr)
					if err != nil {
						return nil, err
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return cleanedOnceFailing(r, &calls)
			})
			tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			answeredAfterARetry(t, tr, noteGET(t), &calls)
		})
	}
}

// cleanedOnceFailing is a base of one's own that cleans the X-Note header
// net/http would refuse of its control characters, then fails once
// (calls counts its calls) with a connection reset, and answers 200.
func cleanedOnceFailing(r *http.Request, calls *atomic.Int32) (*http.Response, error) {
	r.Header.Set("X-Note", strings.Map(func(c rune) rune {
		if c < ' ' {
			return ' '
		}
		return c
	}, r.Header.Get("X-Note")))
	if calls.Add(1) == 1 {
		return nil, errors.New("connection reset by peer")
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

// noteGET is a GET whose X-Note net/http would refuse.
func noteGET(t *testing.T) *http.Request {
	req := get(t, t.Context(), "http://svc.example/v1/items")
	req.Header.Set("X-Note", "line one\nline two")
	return req
}

// answeredAfterARetry sends req through tr and checks it was retried to
// its 200, the base called twice (calls).
func answeredAfterARetry(t *testing.T, tr http.RoundTripper, req *http.Request, calls *atomic.Int32) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		var oe *otelretry.Error
		errors.As(err, &oe)
		t.Fatalf("GET: %v (reason %v, attempts %d, base called %d times); want retried to its 200",
			err, oe.Reason, oe.Attempts, calls.Load())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Errorf("status %d after %d calls; want 200 after 2", resp.StatusCode, calls.Load())
	}
}
