// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// classify maps a transport error to its class by type and sentinel, never
// by message text.
func classify(err error) attrs.ErrorClass {
	var (
		dnsErr   *net.DNSError
		netErr   net.Error
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		certErr  *tls.CertificateVerificationError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invErr   x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &dnsErr):
		return attrs.ErrorClassDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return attrs.ErrorClassConnectionRefused
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return attrs.ErrorClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return attrs.ErrorClassTimeout
	case errors.Is(err, context.Canceled):
		return attrs.ErrorClassCanceled
	case errors.Is(err, errResendRefused),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// The peer closed the connection; the request may have been written.
		return attrs.ErrorClassConnectionReset
	default:
		return attrs.ErrorClassOther
	}
}

// neverSent reports whether err proves the request never reached the server:
// the class says so, or the failure happened while dialing.
func neverSent(err error, class attrs.ErrorClass) bool {
	if class.NotSent() {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// errAttemptTimeout is the cause with which an attempt's context is
// canceled when its response headers do not arrive in time. It is a
// timeout (net.Error) and matches context.DeadlineExceeded, as the
// deadline of a context.WithTimeout would.
var errAttemptTimeout error = attemptTimeoutError{}

type attemptTimeoutError struct{}

func (attemptTimeoutError) Error() string {
	return "otelretry: attempt timed out awaiting response headers"
}
func (attemptTimeoutError) Timeout() bool        { return true }
func (attemptTimeoutError) Temporary() bool      { return true }
func (attemptTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }
func (attemptTimeoutError) ErrorType() string    { return string(attrs.ErrorClassTimeout) }

// errResendRefused is what a lower layer (net/http's own resend of a
// request on a dead keep-alive connection) gets when it asks for a fresh
// body to send again a write that was already written and that the policy
// does not treat as repeatable. The attempt then fails instead of
// repeating the write unseen, and its outcome is unknown.
var errResendRefused = errors.New("otelretry: request already written; a resend below otelretry was refused")

// attemptError is an attempt's error as it is reported upward, to otelhttp
// (which records its message as the client span's status and its
// ErrorType as error.type) and to the caller (inside *Error). It keeps the
// base's error for errors.Is and errors.As, but its message has every URL
// the request is known by sanitized: userinfo and query values never
// reach telemetry or an error string through a base's *url.Error.
type attemptError struct {
	err   error
	msg   string
	class attrs.ErrorClass
}

func (e *attemptError) Error() string { return e.msg }
func (e *attemptError) Unwrap() error { return e.err }

// ErrorType is the semantic conventions' error.type (see semconv.ErrorType):
// the error class.
func (e *attemptError) ErrorType() string { return string(e.class) }

func newAttemptError(err error, class attrs.ErrorClass, u *url.URL) *attemptError {
	return &attemptError{err: err, msg: sanitizeErrorText(err.Error(), err, u), class: class}
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
