// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// scripted answers each call with the next of its answers, as a server
// would over HTTP/2.
type scripted []func(*http.Request) (*http.Response, error)

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	next := (*s)[0]
	*s = (*s)[1:]
	return next(r)
}

func status(code int) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
}

// Retry over HTTP/2 with the classifier first and a caller's own rules
// after it: the first non-zero Classification wins. A POST whose stream
// the server refused (REFUSED_STREAM: not processed) is resent; the
// caller's own rule stops a GET's 503, which the defaults would retry.
// Over a real server the base is http.DefaultTransport, or an
// *http2.Transport.
func ExampleClassify() {
	own := func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode == http.StatusServiceUnavailable {
			return otelretry.NotRetryable()
		}
		return otelretry.Classification{}
	}
	base := &scripted{
		func(*http.Request) (*http.Response, error) {
			return nil, http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}
		},
		status(http.StatusCreated),
		status(http.StatusServiceUnavailable),
	}
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithClassifier(h2.Classify, own))}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		var results otelretry.Results
		ctx := otelretry.WithResults(context.Background(), &results)
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"sku":1}`)
		}
		req, _ := http.NewRequestWithContext(ctx, method, "https://api.example.com/orders", body)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
		r, _ := results.Last()
		fmt.Printf("%s: %s (%s) after %d attempts, status %d\n", method, r.Outcome, r.Reason, r.Attempts, r.StatusCode)
	}
	// Output:
	// POST: return (response) after 2 attempts, status 201
	// GET: stop (classifier) after 1 attempts, status 503
}
