// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A PrepareAttemptFunc that sets URL.Opaque to "//host/path" names
// another host to the server (net/http writes it as the request's target)
// while URL.Host stays: it changed the host the policy judged, and the
// operation ends stop, prepare_failed, with nothing sent (a reviewer's
// find: the request went out, its url.full naming the other host). An
// Opaque that is a path, as a caller writes one escaped as it must be
// sent, changes no host and is sent; any other is refused.
func TestAPrepareAttemptFuncRetargetingThroughOpaqueIsRefused(t *testing.T) {
	for _, c := range []struct {
		opaque    string
		calls     int
		outcome   attrs.Outcome
		reason    attrs.Reason
		requestTo string
	}{
		{"//other.example/x", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		// An absolute URL, net/http's absolute-form target (a reviewer's
		// find: the first fix took only "//host/path").
		{"http://other.example/x", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		{"HTTP://other.example/x", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		// Any Opaque but a path may name a host, in spellings a check
		// would miss (reviewers' finds: a bad escape or a blank hid the
		// host from url.Parse, and the same host in another case was
		// refused): only a path is sent.
		{"//api.test/items/2", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		{"http://other.example/discount/100%", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		{" http://other.example/x", 0, attrs.OutcomeStop, attrs.ReasonPrepareFailed, ""},
		{"/items/a%2Fb", 1, attrs.OutcomeReturn, attrs.ReasonResponse, "/items/a%2Fb"},
	} {
		t.Run(c.opaque, func(t *testing.T) {
			var sent []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = append(sent, r.URL.RequestURI())
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				r.URL.Opaque = c.opaque
				return nil
			}))
			var results otelretry.Results
			resp, err := tr.RoundTrip(get(t, otelretry.WithResults(t.Context(), &results), "http://api.test/items/1"))
			if err == nil {
				resp.Body.Close()
			}
			last, _ := results.Last()
			if len(sent) != c.calls || last.Outcome != c.outcome || last.Reason != c.reason {
				t.Fatalf("sent %q, ended %s/%s; want %d calls, %s/%s", sent, last.Outcome, last.Reason, c.calls, c.outcome, c.reason)
			}
			if c.requestTo != "" && sent[0] != c.requestTo {
				t.Errorf("sent to %q, want %q", sent[0], c.requestTo)
			}
		})
	}
}

// The caller's own Opaque, which a hook leaves as it is, is sent, whatever
// its form: it is what the policy judged.
func TestTheCallersOwnOpaqueIsSentUnderAHook(t *testing.T) {
	var sent []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.URL.RequestURI())
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
		r.Header.Set("Authorization", "Bearer t")
		return nil
	}))
	req := get(t, t.Context(), "http://api.test/items/1")
	req.URL.Opaque = "//api.test/items/1"
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(sent) != 1 || sent[0] != "http://api.test/items/1" {
		t.Errorf("sent %q, want the caller's target once", sent)
	}
}

// A hook that writes an absolute URL in the Path retargets as one in the
// Opaque does: net/http writes the path as the request's target, and Go's
// server reads the host from it (a reviewer's find). A hook that clears
// the caller's path-only Opaque leaves a path, and is sent.
func TestAPrepareAttemptFuncRetargetingThroughThePathIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, opaque string // the caller's Opaque
		hook         func(*http.Request)
		calls        int
	}{
		{"absolute URL in the path", "", func(r *http.Request) { r.URL.Path = "http://other.example/x" }, 0},
		{"the caller's path Opaque cleared", "/items/1", func(r *http.Request) { r.URL.Opaque = "" }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = append(sent, r.URL.RequestURI())
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				c.hook(r)
				return nil
			}))
			req := get(t, t.Context(), "http://api.test/items/1")
			req.URL.Opaque = c.opaque
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if len(sent) != c.calls {
				t.Errorf("sent %q, want %d calls", sent, c.calls)
			}
		})
	}
}
