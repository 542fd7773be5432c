// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"slices"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// An operation's header counts its hedges sent from its attempts, so that
// one read from log records, which carry no operation span and no
// hedge_sent event, says "hedges sent" as the same run read from its spans
// does. It said nothing from log records (a reviewer's remark: the table
// is "the same" from both, docs/retryinspect.md).
func TestTheHedgesSentAreCountedFromTheAttemptsToo(t *testing.T) {
	of := int64(1)
	op := &inspect.Operation{Attempts: []inspect.Attempt{{Number: 1}, {Number: 2, HedgeOf: &of}}}
	if d := opDetails(op); !slices.Contains(d, "hedges sent 1") {
		t.Errorf("details %q; want hedges sent 1", d)
	}
	op.HedgeEvents = []inspect.HedgeEvent{{Event: "hedge_sent"}, {Event: "hedge_sent"}}
	if d := opDetails(op); !slices.Contains(d, "hedges sent 2") {
		t.Errorf("details %q; want hedges sent 2 (an event whose attempt was lost)", d)
	}
}
