// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// Issue 25, item 15, through the public API: with MaxHosts 2, a day
// after two hosts failed once each, a third host's transient 503 is
// retried; a minute after they were last active, it is not.
func TestBudgetIdleHostsMakeRoomThroughTransport(t *testing.T) {
	for _, c := range []struct {
		name       string
		idle       time.Duration
		wantCalls  int
		wantStatus int
	}{
		{"a day idle", 24 * time.Hour, 2, http.StatusOK},
		{"a minute idle", time.Minute, 1, http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &flakyHosts{}
				b := &otelretry.Budget{MaxHosts: 2}
				tr := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(b))...)
				for _, host := range []string{"dead-a.test", "dead-b.test"} {
					roundTripNoPanic(t, tr, "http://"+host+"/")
				}
				time.Sleep(c.idle)
				if got := roundTripNoPanic(t, tr, "http://healthy.test/"); got != c.wantStatus {
					t.Errorf("healthy host: status %d, want %d", got, c.wantStatus)
				}
				if got := base.callsTo("healthy.test"); got != c.wantCalls {
					t.Errorf("healthy host's transient 503: %d calls, want %d", got, c.wantCalls)
				}
			})
		})
	}
}

// flakyHosts answers 503 to every call to a host named dead-*, and to the
// first call to any other host, then 200.
type flakyHosts struct {
	mu    sync.Mutex
	calls map[string]int
}

func (f *flakyHosts) callsTo(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

func (f *flakyHosts) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(5 * time.Millisecond)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[r.URL.Host]++
	n := f.calls[r.URL.Host]
	f.mu.Unlock()
	status := http.StatusOK
	if strings.HasPrefix(r.URL.Host, "dead-") || n == 1 {
		status = http.StatusServiceUnavailable
	}
	return &http.Response{
		StatusCode: status, Status: fmt.Sprint(status, " ", http.StatusText(status)),
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}
