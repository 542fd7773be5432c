// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package baselines

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// roundTripFunc answers with a function, on virtual time.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(code int) *http.Response {
	return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader("x"))}
}

// A hanging dependency: each attempt is cut at its timeout and retried
// after the constant pause, three attempts in all.
func TestNaiveRetriesAHangingAttemptAfterItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var sent []time.Duration
		hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = append(sent, time.Since(start))
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://dep/", nil)
		_, err := Naive(WithAttemptTimeout(hang, 200*time.Millisecond), 3, 10*time.Millisecond).RoundTrip(req)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the last attempt's timeout", err)
		}
		want := []time.Duration{0, 210 * time.Millisecond, 420 * time.Millisecond}
		if !slices.Equal(sent, want) || time.Since(start) != 620*time.Millisecond {
			t.Fatalf("attempts at %v, returned at %v; want %v and 620ms", sent, time.Since(start), want)
		}
	})
}

// 503 is retried, another status is returned at once, and the attempt's
// context lives until the caller closes the body it reads.
func TestNaiveRetries503AndKeepsTheAnswersContextUntilClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		codes := []int{503, 404}
		var last context.Context
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			last = r.Context()
			c := codes[0]
			codes = codes[1:]
			return answer(c), nil
		})
		req, _ := http.NewRequest(http.MethodGet, "http://dep/", nil)
		resp, err := Naive(WithAttemptTimeout(base, time.Second), 3, 10*time.Millisecond).RoundTrip(req)
		if err != nil || resp.StatusCode != 404 || len(codes) != 0 {
			t.Fatalf("got %v, %v after %d answers; want the 404, the second", resp, err, 2-len(codes))
		}
		if last.Err() != nil {
			t.Fatal("the attempt's context ended before its body was closed")
		}
		resp.Body.Close()
		if last.Err() == nil {
			t.Fatal("closing the body must end the attempt's context")
		}
	})
}
