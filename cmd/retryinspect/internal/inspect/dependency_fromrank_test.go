// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Two operations of one host, read from log records: the first lost its
// retry.operation record (named by url.full's host), the second kept it
// (named by server.address). One dependency, as it should be; its From
// says the best source its operations' names came from, server.address,
// not whichever came first (a reviewer's find: it said url.full).
func TestAMixedDependencySaysItsBestSource(t *testing.T) {
	full := func(u string) model.Attribute { return model.Attribute{Key: keyURLFull, Value: model.String(u)} }
	lost := []*model.Span{{Attributes: []model.Attribute{full("https://h.test:8443/a")}}}
	kept := []*model.Span{
		{Attributes: []model.Attribute{full("https://h.test:8443/a"),
			{Key: keyServerAddress, Value: model.String("h.test")}, {Key: keyServerPort, Value: model.Int(8443)}}},
		{Attributes: []model.Attribute{full("https://h.test:8443/a")}},
	}
	r := &Report{}
	for _, spans := range [][]*model.Span{lost, kept, kept} {
		name, from := dependencyName(spans, spans, nil)
		r.Operations = append(r.Operations, Operation{Dependency: name, dependencyFrom: from})
	}
	deps := dependencies(r)
	if len(deps) != 1 {
		t.Fatalf("%d dependencies for one host: %+v", len(deps), deps)
	}
	if deps[0].From != FromServerAddress {
		t.Errorf("dependency %q of 3 operations, 2 of them with server.address, says from %q", deps[0].Name, deps[0].From)
	}
}
