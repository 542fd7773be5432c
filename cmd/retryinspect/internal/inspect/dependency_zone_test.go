// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// docs/budget.md: a dependency, "on every page and in retryinspect", keeps
// an IPv6 zone's case (%en0 and %EN0 are two), as the transport's budget
// does (oneName); retryinspect lower-cased the zone too (a reviewer's find).
func TestHostOfKeepsAnIPv6ZonesCase(t *testing.T) {
	span := func(addr, url string) *model.Span {
		return &model.Span{Attributes: []model.Attribute{
			{Key: keyServerAddress, Value: model.String(addr)},
			{Key: keyServerPort, Value: model.Int(80)},
			{Key: keyURLFull, Value: model.String(url)},
		}}
	}
	en0 := hostOf(span("fe80::1%en0", "http://[fe80::1%25en0]/x"))
	EN0 := hostOf(span("fe80::1%EN0", "http://[fe80::1%25EN0]/x"))
	if en0 == EN0 {
		t.Errorf("hostOf: %%en0 and %%EN0 are both %q; the budget keeps them as two dependencies", en0)
	}
	if got := hostOf(span("FE80::1%EN0", "http://[FE80::1%25EN0]/x")); got != "[fe80::1%EN0]" {
		t.Errorf("hostOf([FE80::1%%EN0]) = %q, want %q (the budget's key)", got, "[fe80::1%EN0]")
	}
}

// An IPv6 address is one dependency however it is written, as the
// transport keeps it (budget.go's oneName): [0:0:0:0:0:0:0:1] and
// [::0001] are [::1] (a reviewer's find: the transport kept each
// spelling as a dependency and a metric series of its own).
func TestHostOfWritesAnIPv6AddressOneWay(t *testing.T) {
	for addr, want := range map[string]string{
		"0:0:0:0:0:0:0:1": "[::1]", "::0001": "[::1]", "2001:DB8:0::1": "[2001:db8::1]", "FE80::0:1%En0": "[fe80::1%En0]",
		"::ffff:127.0.0.1": "127.0.0.1", "::FFFF:7F00:1": "127.0.0.1",
		// A name's case is its ASCII letters': İ.test is another host than
		// i.test, as the transport keeps it.
		"\u0130.TEST": "\u0130.test",
	} {
		s := &model.Span{Attributes: []model.Attribute{
			{Key: keyServerAddress, Value: model.String(addr)},
			{Key: keyServerPort, Value: model.Int(80)},
			{Key: keyURLFull, Value: model.String("http://[" + addr + "]/x")},
		}}
		if got := hostOf(s); got != want {
			t.Errorf("hostOf(%s) = %q, want %q", addr, got, want)
		}
	}
}
