// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"testing"
	"time"
)

// TestAFarHTTPDateIsCappedAt24Hours: an HTTP-date Retry-After further
// ahead than the cap waits 24 h, as a number of seconds past it does
// (retryafter.go, maxRetryAfter); the cap is not the digits' alone.
func TestAFarHTTPDateIsCappedAt24Hours(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, in := range []string{
		now.Add(maxRetryAfter + time.Second).Format(http.TimeFormat),
		now.AddDate(1, 0, 0).Format(http.TimeFormat),
		"Fri, 31 Dec 9999 23:59:59 GMT",
		"Monday, 30-Nov-26 23:59:60 GMT", // leap second, still 12 h: under the cap
	} {
		got, err := parseRetryAfter(in, now)
		if err != nil {
			t.Fatalf("parseRetryAfter(%q) error %v", in, err)
		}
		if got > maxRetryAfter {
			t.Errorf("parseRetryAfter(%q) = %v, want at most %v", in, got, maxRetryAfter)
		}
	}
	if got, _ := parseRetryAfter(now.Add(48*time.Hour).Format(http.TimeFormat), now); got != maxRetryAfter {
		t.Errorf("a date 48 h ahead waits %v, want %v", got, maxRetryAfter)
	}
}
