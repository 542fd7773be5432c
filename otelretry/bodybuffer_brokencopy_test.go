// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// errUpstream is a streamed body's own failure (a proxy's upstream), which
// a Classifier reads as this server's refusal.
var errUpstream = errors.New("upstream refused its stream")

// brokenAfterPrefix is a streamed body that gives a prefix, then
// errUpstream.
type brokenAfterPrefix struct{ n int }

func (b *brokenAfterPrefix) Read(p []byte) (int, error) {
	b.n++
	if b.n == 1 {
		return copy(p, "order="), nil
	}
	return 0, errUpstream
}

func (b *brokenAfterPrefix) Close() error { return nil }

// resendingBase is a base that resends below with the request's GetBody,
// as net/http does: it reads the first body whole (the server had it),
// then a fresh copy from GetBody, which breaks as it reads it.
type resendingBase struct {
	calls      atomic.Int32
	useGetBody bool
}

func (b *resendingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls.Add(1)
	body := r.Body
	if b.useGetBody {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.GetBody == nil {
			return nil, errors.New("no GetBody")
		}
		var err error
		if body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	_, err := io.Copy(io.Discard, body)
	body.Close()
	if err == nil {
		err = errors.New("no answer")
	}
	return nil, err
}

// A POST whose body broke as the base read it proves nothing, whatever its
// Classifier says (classify/h2's Evidence godoc): its own body, and the
// copy the base made with GetBody for a resend of its own (a reviewer's
// find: the copy's failure was not looked at).
func TestABrokenBodyCopyFromGetBodyIsNoProof(t *testing.T) {
	for name, useGetBody := range map[string]bool{"own body": false, "GetBody copy below": true} {
		t.Run(name, func(t *testing.T) {
			base := &resendingBase{useGetBody: useGetBody}
			checkABrokenBodyIsNoProof(t, base, &base.calls, func(req *http.Request) {
				req.Body = &brokenAfterPrefix{}
				req.GetBody = func() (io.ReadCloser, error) {
					if useGetBody {
						return &brokenAfterPrefix{}, nil
					}
					return io.NopCloser(bytes.NewReader([]byte("order=1"))), nil
				}
				if useGetBody {
					req.Body = io.NopCloser(bytes.NewReader([]byte("order=1")))
				}
			})
		})
	}
}

// checkABrokenBodyIsNoProof sends a streamed POST, its body and GetBody
// set by bodies, through base (which counts its calls in calls) with a
// Classifier that reads errUpstream as this server's REFUSED_STREAM: the
// write must be sent once and end with its outcome unknown.
func checkABrokenBodyIsNoProof(t *testing.T, base http.RoundTripper, calls *atomic.Int32, bodies func(*http.Request)) {
	t.Helper()
	classifier := func(a otelretry.Answer) otelretry.Classification {
		if errors.Is(a.Err, errUpstream) {
			return otelretry.NotProcessed(otelretry.Evidence{Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"})
		}
		return otelretry.Classification{}
	}
	rt := otelretry.NewTransport(base, otelretry.WithClassifier(classifier),
		otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
		otelretry.WithDeadline(10*time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/orders", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	bodies(req)
	req.ContentLength = -1 // streamed: not buffered by otelretry
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("base called %d times; want 1: a POST whose body broke was resent on its body's own error", n)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v; want ErrOutcomeUnknown", err)
	}
}

// twoCopiesBase takes two copies with GetBody before reading the first
// of them: the first copy breaks after the second was handed.
type twoCopiesBase struct{ calls atomic.Int32 }

func (b *twoCopiesBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls.Add(1)
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	c2, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	c3, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, c2)
	c2.Close()
	io.Copy(io.Discard, c3)
	c3.Close()
	if err == nil {
		err = errors.New("no answer")
	}
	return nil, err
}

// Every body not held in memory the base was handed counts, in whatever
// order the base reads them: here a copy that broke after a later copy
// was asked for (the wire looked at the last copy alone: a reviewer's
// find).
func TestABrokenCopyReadAfterALaterCopyIsNoProof(t *testing.T) {
	base := &twoCopiesBase{}
	checkABrokenBodyIsNoProof(t, base, &base.calls, func(req *http.Request) {
		req.Body = io.NopCloser(bytes.NewReader([]byte("order=1")))
		var gets atomic.Int32
		req.GetBody = func() (io.ReadCloser, error) {
			if gets.Add(1)%2 == 1 {
				return &brokenAfterPrefix{}, nil
			}
			return io.NopCloser(bytes.NewReader([]byte("order=1"))), nil
		}
	})
}
