// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/sdk-recipes.md, "Reads sent as POST, by path": the POSTs whose path
// the layer names are repeated after a dropped connection (git's fetch),
// every other POST stays a write (git's push: one request, its outcome
// unknown), and an Intent the caller set is kept (its attempt limit). A
// review drove go-git v5.19.3 and slack-go v0.36.0 over otelretry with the
// same mark; these requests are theirs, made here without them.
func TestRepeatablePOSTsMarkTheirPathsOnly(t *testing.T) {
	s := newCountingServer(t, methodAndPath, func(_ string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			drop(w) // the first of each path: the connection drops before any answer
			return
		}
		w.Write([]byte("ok"))
	})
	client := &http.Client{Transport: repeatablePOSTs{testTransport(otelretry.WithoutBudget()), []string{"/git-upload-pack"}}}
	post := func(ctx context.Context, path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader("0032want 0123456789abcdef\n"))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	if err := post(t.Context(), "/repo.git/git-upload-pack"); err != nil {
		t.Errorf("a marked fetch whose first connection dropped: %v; want it sent again and answered", err)
	}
	if n := s.executed("POST /repo.git/git-upload-pack"); n != 2 {
		t.Errorf("the marked fetch reached the server %d times; want 2", n)
	}

	if err := post(t.Context(), "/repo.git/git-receive-pack"); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("an unmarked push whose connection dropped: %v; want its outcome unknown", err)
	}
	if n := s.executed("POST /repo.git/git-receive-pack"); n != 1 {
		t.Errorf("the unmarked push reached the server %d times; want 1", n)
	}

	once := otelretry.WithIntent(t.Context(), otelretry.Intent{MaxAttempts: 1})
	if err := post(once, "/other.git/git-upload-pack"); err == nil {
		t.Error("a marked fetch under the caller's MaxAttempts 1: answered; want the dropped connection's error, not sent again")
	}
	if n := s.executed("POST /other.git/git-upload-pack"); n != 1 {
		t.Errorf("the fetch under MaxAttempts 1 reached the server %d times; want 1", n)
	}
}

// A redirect's hop is judged by the path the caller asked for: a marked
// read that a 307 sends to another path is still the read (sent again
// after its dropped connection), and a write that a 307 sends to a marked
// path is still a write (its outcome unknown, not sent again). The layer
// read each hop's own path: the read's hop was a write (a reviewer's find).
func TestRepeatablePOSTsJudgeARedirectByThePathAsked(t *testing.T) {
	s := newCountingServer(t, methodAndPath, func(_ string, n int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r.git/git-upload-pack":
			w.Header().Set("Location", "/mirror/upload")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "/r.git/git-receive-pack":
			w.Header().Set("Location", "/mirror/git-upload-pack")
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			if n == 1 {
				drop(w)
				return
			}
			w.Write([]byte("ok"))
		}
	})
	client := &http.Client{Transport: repeatablePOSTs{testTransport(otelretry.WithoutBudget()), []string{"/git-upload-pack"}}}
	post := func(path string) error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, strings.NewReader("0032want 0123456789abcdef\n"))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	if err := post("/r.git/git-upload-pack"); err != nil {
		t.Errorf("a marked read redirected by 307, its next hop dropped: %v; want it sent again", err)
	}
	if n := s.executed("POST /mirror/upload"); n != 2 {
		t.Errorf("the redirected read reached its new path %d times; want 2", n)
	}
	if err := post("/r.git/git-receive-pack"); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("a write redirected by 307 to a marked path, its next hop dropped: %v; want its outcome unknown", err)
	}
	if n := s.executed("POST /mirror/git-upload-pack"); n != 1 {
		t.Errorf("the redirected write reached its new path %d times; want 1", n)
	}
}
