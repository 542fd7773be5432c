// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"0", 0, false},
		{"120", 2 * time.Minute, false},
		{"99999999999999999999999", maxRetryAfter, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, false},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, false},
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, false}, // RFC 850, in the past
		{"-1", 0, true},
		{"1.5", 0, true},
		{" 10", 0, true},
		{"soon", 0, true},
		{"", 0, true},
	}
	for _, tc := range cases {
		got, err := ParseRetryAfter(tc.in, now)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, error=%v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, errInvalidRetryAfter) {
			t.Errorf("error %v does not match errInvalidRetryAfter", err)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"0", "5", "Mon, 30 Nov 2026 12:00:10 GMT", "garbage", "-3", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseRetryAfter(s, now)
		if err != nil {
			if d != 0 || !errors.Is(err, errInvalidRetryAfter) {
				t.Fatalf("error %v with duration %v", err, d)
			}
			return
		}
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %v out of [0, %v]", s, d, maxRetryAfter)
		}
	})
}
