// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// TestADependencyWithoutServerAddressIsURLFullsHost: an attempt's log
// record carries url.full and leaves the server fields to its operation's
// record; with that record lost, the dependency is url.full's host, as a
// URL writes it (a reviewer's find: it was "(no server.address)"). A span
// with server.address is named by it first.
func TestADependencyWithoutServerAddressIsURLFullsHost(t *testing.T) {
	attempt := func(kv ...model.Attribute) *model.Span { return &model.Span{Attributes: kv} }
	full := func(u string) model.Attribute { return model.Attribute{Key: keyURLFull, Value: model.String(u)} }
	for _, c := range []struct {
		spans      []*model.Span
		name, from string
	}{
		{[]*model.Span{attempt(full("https://H.test:443/v1?q=REDACTED"))}, "h.test", FromURLFull},
		{[]*model.Span{attempt(full("http://[::1]:8080/"))}, "[::1]:8080", FromURLFull},
		{[]*model.Span{attempt(full("https://REDACTED:REDACTED@h.test:8443/"))}, "h.test:8443", FromURLFull},
		{[]*model.Span{attempt(full("not a url"))}, "", ""},
		{[]*model.Span{attempt(full("https://h.test/")), attempt(
			model.Attribute{Key: keyServerAddress, Value: model.String("api.test")}, full("https://h.test/"))}, "api.test", FromServerAddress},
	} {
		name, from := dependencyName(c.spans, c.spans, nil)
		if name != c.name || from != c.from {
			t.Errorf("%v: named %q from %q, want %q from %q", c.spans[0].Attributes, name, from, c.name, c.from)
		}
	}
}
