// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// SanitizeURL returns u as it may appear in telemetry, as the semantic
// conventions ask for url.full: userinfo becomes REDACTED:REDACTED (also
// when a URL built by hand carries it in Opaque), every query value becomes
// REDACTED while the keys and their order stay, so a reader can still see
// which parameters were sent, and the fragment is dropped. A nil URL
// yields "". retryinspect displays URLs through the same sanitizer. It is
// exported so that a service's own log lines about a request show its URL
// exactly as the spans do.
func SanitizeURL(u *url.URL) string { return redact.URL(u) }

// lastURL is the last URL a Transport's operations sanitized, with its
// sanitized form: a client mostly calls the same URLs, and sanitizing one
// costs two allocations. It holds one entry, replaced on a miss, so it
// never grows; an entry is reused only for a URL equal to it in every
// field. A URL with userinfo is never kept: its password would outlive the
// request in the Transport. Operations read it concurrently.
type lastURL struct{ last atomic.Pointer[sanitizedURL] }

type sanitizedURL struct {
	u     url.URL
	clean string
}

// sanitize returns SanitizeURL(u), reusing the last one when u equals the
// URL it was made from.
func (c *lastURL) sanitize(u *url.URL) string {
	if u == nil {
		return ""
	}
	if e := c.last.Load(); e != nil && e.u == *u {
		return e.clean
	}
	clean := SanitizeURL(u)
	if u.User == nil {
		c.last.Store(&sanitizedURL{u: *u, clean: clean})
	}
	return clean
}

// sanitizeErrorText removes secrets from msg, the text of err: every URL
// of a *url.Error in err's chain and every spelling of u (the request's
// URL) is replaced by its sanitized form, and u's query and password are
// replaced wherever they still appear.
func sanitizeErrorText(msg string, err error, u *url.URL) string {
	replace := func(raw string, clean string) {
		if raw == "" || raw == clean || !strings.Contains(msg, raw) {
			return
		}
		msg = strings.ReplaceAll(msg, raw, clean)
	}
	walkErrors(err, func(e error) {
		if ue, ok := e.(*url.Error); ok && ue.URL != "" {
			clean := sanitizeRawURL(ue.URL)
			replace(strconv.Quote(ue.URL), strconv.Quote(clean))
			replace(ue.URL, clean)
		}
	})
	if u != nil {
		clean := SanitizeURL(u)
		replace(u.String(), clean)
		replace(u.Redacted(), clean)
		if u.RawQuery != "" {
			replace(u.RawQuery, redactedQuery(u.RawQuery))
		}
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				replace(p, attrs.Redacted)
			}
			replace(u.User.Username(), attrs.Redacted)
		}
	}
	return msg
}

// walkErrors calls f on err and every error in its chain, following both
// Unwrap() error and Unwrap() []error.
func walkErrors(err error, f func(error)) {
	for depth := 0; err != nil && depth < 64; depth++ {
		f(err)
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walkErrors(e, f)
			}
			return
		default:
			return
		}
	}
}

// sanitizeRawURL sanitizes a URL found as text (in an error), as
// SanitizeURL does; text that does not parse is redacted whole where it
// may carry a secret.
func sanitizeRawURL(raw string) string { return redact.String(raw) }

// redactedQuery returns raw with every value replaced by attrs.Redacted.
func redactedQuery(raw string) string {
	return strings.TrimPrefix(SanitizeURL(&url.URL{RawQuery: raw}), "?")
}

// sanitizedMessage is err's message with the URLs the request is known by
// (caller, and wire when it differs) and any other URL-like word in it
// sanitized.
func sanitizedMessage(err error, caller, wire *url.URL) string {
	msg := sanitizeErrorText(err.Error(), err, caller)
	if wire != nil && wire != caller {
		msg = sanitizeErrorText(msg, nil, wire)
	}
	return redact.Text(msg)
}
