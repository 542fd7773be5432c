// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// A parseable hint of zero ("Retry-After: 0") is a hint: the attempt
// records retry.retry_after_ms = 0 (docs/telemetry.md: "when parseable"),
// and an attempt without a hint records no such field.
func TestAZeroRetryHintIsRecorded(t *testing.T) {
	cases := []struct {
		name    string
		ev      attemptEvent
		want    int64
		present bool
	}{
		{"Retry-After: 0", attemptEvent{hasRetryAfter: true, retryAfter: 0}, 0, true},
		{"a hint of 1.5s", attemptEvent{hasRetryAfter: true, retryAfter: 1500 * time.Millisecond}, 1500, true},
		{"no hint", attemptEvent{}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kv := pacingFields(nil, &tc.ev)
			got, found := int64(0), false
			for _, f := range kv {
				if f.Key == attrs.RetryAfterMsKey {
					got, found = f.Value.AsInt64(), true
				}
			}
			if found != tc.present || got != tc.want {
				t.Errorf("retry.retry_after_ms = %d (present %v), want %d (present %v)", got, found, tc.want, tc.present)
			}
		})
	}
}
