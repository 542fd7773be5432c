// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The Kubernetes client-go recipe of docs/sdk-recipes.md, as code the
// tests use: keep the two the same.

// otelretryUnderClientGo puts otelretry under client-go's own wrappers
// (authentication, user agent), in WrapTransport: client-go refuses a
// custom Transport together with TLS options. The answers client-go
// resends itself are left to it.
func otelretryUnderClientGo(config *rest.Config, opts ...otelretry.Option) {
	opts = append([]otelretry.Option{otelretry.WithClassifier(leaveToClientGo)}, opts...)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return watchesToClientGo{otelretry.NewTransport(rt, opts...)}
	})
}

// watchesToClientGo sends each watch (a GET with watch=true) as one
// attempt: client-go's Watch resends one that timed out itself, which it
// reads from otelretry's error (max_attempts after a timeout).
type watchesToClientGo struct{ next http.RoundTripper }

func (w watchesToClientGo) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true" {
		in := otelretry.CallIntent(req.Context()) // the caller's, kept
		in.MaxAttempts = 1
		req = req.WithContext(otelretry.WithIntent(req.Context(), in))
	}
	return w.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach otelretry's CancelRequest.
func (w watchesToClientGo) WrappedRoundTripper() http.RoundTripper { return w.next }

// leaveToClientGo stops otelretry's retries of what client-go resends
// itself: whatever the verb, a 429 or a 5xx whose Retry-After is a whole
// number of seconds (up to 10 times, after the wait it names), and a GET
// whose connection was lost in a way its check still reads in otelretry's
// error (clientGoResendsLost).
func leaveToClientGo(a otelretry.Answer) otelretry.Classification {
	if a.StatusCode == http.StatusTooManyRequests || a.StatusCode >= http.StatusInternalServerError {
		if _, err := strconv.Atoi(a.Header.Get("Retry-After")); err == nil {
			return otelretry.NotRetryable()
		}
	}
	if a.Err != nil && a.Request.Method == http.MethodGet && clientGoResendsLost(a.Err) {
		return otelretry.NotRetryable()
	}
	return otelretry.Classification{}
}

// clientGoResendsLost reports whether client-go sends a GET again after
// err once otelretry hands it back wrapped: its checks that look for an
// errno or a phrase (a reset, a GOAWAY, a lost HTTP/2 connection) still
// find it; those that compare the error itself (io.EOF, the broken
// connection's exact message) no longer do, and otelretry keeps those.
func clientGoResendsLost(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		utilnet.IsProbableEOF(err) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
			err.Error() != "http: can't write HTTP request on broken connection"
}
