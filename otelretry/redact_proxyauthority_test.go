// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/url"
	"strings"
	"testing"
)

// A proxy's path that holds its target URL (escaped once or twice): an
// error that names the target by its authority alone, without its
// scheme's "://" ("proxy could not reach admin:PW@internal.test"), loses
// the target's userinfo too (redact.go sanitizeKnownText: "A proxy's
// target URL in the path, printed as sent").
func TestAProxysTargetAuthorityInAnErrorLeaksNoCredential(t *testing.T) {
	const secret = "S3cretPw"
	target := "https://admin:" + secret + "@internal.test/x"
	for _, path := range []string{url.QueryEscape(target), url.QueryEscape(url.QueryEscape(target))} {
		for _, spelled := range []string{"admin:" + secret + "@internal.test", url.QueryEscape("admin:" + secret + "@internal.test")} {
			got := boundaryTexts(t, "http://proxy.test/fetch/"+path, nil, "proxy could not reach "+spelled)
			if strings.Contains(got, secret) {
				t.Errorf("path %s, error naming %s: the target's password reached telemetry:\n%s", path, spelled, got)
			}
			if !strings.Contains(got, "proxy could not reach") {
				t.Errorf("the cause was lost:\n%s", got)
			}
		}
	}
}
