// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// An operation record's retry.hedge.refused is read as the refused hedges'
// reasons only when it is a list of reasons: anything else (not JSON, not
// a list, a null or an empty reason in it) gives no event, so that no
// refusal is invented.
func TestRefusedHedgesAreReadOnlyFromAListOfReasons(t *testing.T) {
	for text, want := range map[string]int{
		`["hedge_limit","throttle"]`: 2,
		`["budget"]`:                 1,
		`[]`:                         0,
		`["throttle",null]`:          0,
		`[null]`:                     0,
		`[""]`:                       0,
		`["throttle",3]`:             0,
		`{"a":"b"}`:                  0,
		`hedge_limit`:                0,
	} {
		r := logRecord{event: attrs.LogEventOperation, attrs: []model.Attribute{
			{Key: string(attrs.HedgesRefusedKey), Value: model.Other(text)}}}
		if got := len(r.span().Events); got != want {
			t.Errorf("%s: %d hedge_refused events, want %d", text, got, want)
		}
	}
}
