// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// docs/telemetry.md ("Secrets"): a password alone at any length and a user
// name alone from 8 bytes are lost, "So are those of a target URL's
// userinfo in the path (read as a URL parser reads it)"; CHANGELOG
// (Unreleased, Fixed): the request's and the target's parts "now go
// alike". A target whose own path holds an '@' after its host (a real
// userinfo, url.Parse reads user and password) keeps them alone.
func TestATargetsPartsAloneAreLostWhenItsPathHoldsAnAt(t *testing.T) {
	const user, pass = "svc-admin-user", "S3cretPassw0rd"
	for _, raw := range []string{
		"http://p.test/fetch/https://" + user + ":" + pass + "@internal.test/users/a@b",
		"http://p.test/fetch/https://" + user + ":" + pass + "@internal.test/x/a:b@c",
	} {
		for _, secret := range []string{pass, user} {
			t.Run(raw+"/"+secret, func(t *testing.T) {
				got := everyTelemetryText(t, raw, func(*http.Request) error {
					return fmt.Errorf("auth failed for %s", secret)
				})
				if strings.Contains(got, secret) {
					t.Errorf("%q reached telemetry:\n%s", secret, got)
				}
			})
		}
	}
}

// redact.go's spelledSecrets comment and the CHANGELOG (Unreleased,
// Fixed): a target's parts "are read from the path as sent, so that a
// name holding an escaped ':' is split where a URL parser splits it", and
// "only what a URL parser reads as a userinfo ('/img/w:s@2x' is none: its
// 's' would take a letter out of every word)". A target with a user name
// alone that holds an escaped ':' (url.User("ops:s") writes "ops%3As")
// has no password as url.Parse reads it; its name (under 8 bytes) is a
// word of the text. The error's words must stay whole.
func TestATargetUserNameWithAnEscapedColonLeavesAnErrorsWordsAlone(t *testing.T) {
	for _, name := range []string{"ops:s", "ci:e", "ci:on"} {
		target := &url.URL{Scheme: "https", User: url.User(name), Host: "internal.test", Path: "/x"}
		raw := "http://p.test/fetch/" + target.String()
		t.Run(raw, func(t *testing.T) {
			const msg = "dial tcp 127.0.0.1:443: connect: connection refused"
			got := everyTelemetryText(t, raw, func(*http.Request) error { return errors.New(msg) })
			if !strings.Contains(got, msg) {
				t.Errorf("the error's words were cut:\n%s", got)
			}
		})
	}
}
