// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/url"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// SanitizeURL returns u as it may appear in telemetry, as the semantic
// conventions ask for url.full: userinfo becomes REDACTED:REDACTED (also
// when a URL built by hand carries it in Opaque), every query value becomes
// REDACTED while the keys and their order stay, so a reader can still see
// which parameters were sent, and the fragment is dropped. A nil URL
// yields "". retryinspect displays URLs through the same sanitizer.
func SanitizeURL(u *url.URL) string { return redact.URL(u) }
