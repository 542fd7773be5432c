// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// silentApplyLayer is a layer of one's own: it sends the write through a
// custom client that reports nothing through httptrace (here: it applies
// it itself), then makes a follow-up call (a token refresh, an audit
// record) through another otelretry Transport with the request's context;
// that call's preparation fails, so it makes no attempt, and the layer
// returns its error.
type silentApplyLayer struct {
	applied  atomic.Int32
	followUp http.RoundTripper
	url      string
}

func (l *silentApplyLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	l.applied.Add(1) // the write reached the host through a silent client
	if l.url == "" {
		return nil, errors.New("plain failure")
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, l.url, nil)
	resp, err := l.followUp.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	if err == nil {
		err = errors.New("follow-up unexpectedly answered")
	}
	return nil, err
}

// A write that a silent layer applied, then failed with the error of a
// later, unrelated otelretry call that made no attempt, may have been
// applied: the silent-base rule (decisions.md row 15) says check_state,
// not resent. The inner call's "sent nothing" speaks only of itself: it
// is the outer's proof only where the outer's base is that otelretry
// Transport itself. The write was applied 3 times, taken for unsent (a
// reviewer's find).
func TestASilentLayersFollowUpThatSentNothingIsNoProofOfTheWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	follow := otelretry.NewTransport(http.DefaultTransport, otelretry.WithPrepareAttempt(
		func(*http.Request, int) error { return errors.New("no credentials") }))
	layer := &silentApplyLayer{followUp: follow, url: srv.URL}
	tr := otelretry.NewTransport(layer, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	resp, err := tr.RoundTrip(post(t, t.Context(), srv.URL, "x"))
	if resp != nil {
		resp.Body.Close()
	}
	if n := layer.applied.Load(); n != 1 || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("the write was applied %d time(s); err %v (unknown outcome: %v); want it applied once, check_state (ErrOutcomeUnknown)",
			n, err, errors.Is(err, otelretry.ErrOutcomeUnknown))
	}
}

// Control: the same layer failing with an error of its own ends
// check_state after one application (the silent-base rule holds).
func TestASilentLayersOwnFailureControl(t *testing.T) {
	layer := &silentApplyLayer{followUp: http.DefaultTransport}
	tr := otelretry.NewTransport(layer, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	resp, err := tr.RoundTrip(post(t, t.Context(), "http://127.0.0.1:1", "x"))
	if resp != nil {
		resp.Body.Close()
	}
	if n := layer.applied.Load(); n != 1 || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("control: applied %d, err %v", n, err)
	}
}
