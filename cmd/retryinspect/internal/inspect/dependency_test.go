// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// TestHostOfWritesAURLsHost: server.address and server.port read as the
// URL's host would write them, which is the retry budget's default key.
func TestHostOfWritesAURLsHost(t *testing.T) {
	span := func(addr string, port any, url string) *model.Span {
		s := &model.Span{Attributes: []model.Attribute{{Key: keyServerAddress, Value: model.String(addr)}}}
		switch p := port.(type) {
		case int:
			s.Attributes = append(s.Attributes, model.Attribute{Key: keyServerPort, Value: model.Int(int64(p))})
		case string:
			s.Attributes = append(s.Attributes, model.Attribute{Key: keyServerPort, Value: model.String(p)})
		}
		if url != "" {
			s.Attributes = append(s.Attributes, model.Attribute{Key: keyURLFull, Value: model.String(url)})
		}
		return s
	}
	for _, c := range []struct {
		span *model.Span
		want string
	}{
		{span("api.example.com", 443, "https://api.example.com/x"), "api.example.com"},
		{span("api.example.com", 80, "HTTP://api.example.com/x"), "api.example.com"},
		{span("api.example.com", 443, "http://api.example.com:443/x"), "api.example.com:443"},
		{span("127.0.0.3", 8080, ""), "127.0.0.3:8080"},
		{span("127.0.0.3", 80, ""), "127.0.0.3:80"}, // no scheme: no default to leave out
		{span("::1", 8080, "http://[::1]:8080/"), "[::1]:8080"},
		{span("127.0.0.3", nil, ""), "127.0.0.3"},
		{span("127.0.0.3", "8080", ""), "127.0.0.3"}, // not an integer: not a port
		{span("", 8080, ""), ":8080"},                // the local system, as a URL writes it and the budget keys it
		{span("", 80, "http://:80/"), ""},
		{span("API.Example.com.", 443, "https://API.Example.com./x"), "api.example.com"}, // one DNS name, as the transport keys it
		{span("::1", 443, "https://[::1]/x"), "[::1]"},                                   // as the transport keys it
		{span("::1", nil, ""), "[::1]"},
	} {
		if got := hostOf(c.span); got != c.want {
			t.Errorf("hostOf(%v) = %q, want %q", c.span.Attributes, got, c.want)
		}
	}
}
