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
	"reflect"
	"syscall"

	"github.com/otelretry/otelretry-go/attrs"
)

// classify maps a transport error to its class by type and sentinel, never
// by message text.
func classify(err error) attrs.ErrorClass {
	var (
		dnsErr   *net.DNSError
		netErr   net.Error
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
	)
	switch {
	case errors.As(err, &dnsErr):
		return attrs.ErrorClassDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return attrs.ErrorClassConnectionRefused
	case errors.As(err, &recErr), errors.As(err, &alertErr), tlsAlert(err), certificateRejected(err):
		return attrs.ErrorClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return attrs.ErrorClassTimeout
	case errors.Is(err, context.Canceled):
		return attrs.ErrorClassCanceled
	case errors.Is(err, errResendRefused),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), serverClosedIdle(err), closedAfterGoAway(err):
		// The peer closed the connection; the request may have been written.
		return attrs.ErrorClassConnectionReset
	default:
		return attrs.ErrorClassOther
	}
}

// certificateRejected reports whether err says the client could not
// verify the server's certificate: crypto/tls's verification error, or
// one of the errors crypto/x509's Verify returns (a VerifyConnection or
// VerifyPeerCertificate of the caller's own may return one as it is). The same certificate fails again,
// whatever the attempt; an alert the server sent, or a record that is
// not TLS, may not.
func certificateRejected(err error) bool {
	var (
		certErr       *tls.CertificateVerificationError
		authErr       x509.UnknownAuthorityError
		hostErr       x509.HostnameError
		invErr        x509.CertificateInvalidError
		rootsErr      x509.SystemRootsError
		extensionErr  x509.UnhandledCriticalExtension
		constraintErr x509.ConstraintViolationError
		algorithmErr  x509.InsecureAlgorithmError
	)
	return errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) ||
		errors.As(err, &invErr) || errors.As(err, &rootsErr) || errors.As(err, &extensionErr) ||
		errors.As(err, &constraintErr) || errors.As(err, &algorithmErr)
}

// refusal is what refused an attempt that got no response, such that
// the same request meets it again: net/http's Transport, or an
// otelretry Transport below never built (byTransport), or the client's
// verification of the server's certificate.
type refusal struct {
	byTransport, certificate bool
}

// serverClosedIdle reports whether err holds net/http's "server closed
// idle connection": its HTTP/1 client saw the server close the connection
// while it expected no answer, and closed the socket under the lock it
// counts a request under before handing it to its writer: the request was
// never written (net.ErrClosed, the same close met by the writer, proves
// nothing of the kind: a caller's cut closes the socket too). net/http
// keeps the error unexported, an errors.New whose whole text is its only
// identity: it is compared whole, at an error of errors.New's own type in
// err's tree (as errors.Is walks it), never looked for in a message.
func serverClosedIdle(err error) bool {
	found := false
	walkErrors(err, func(e error) {
		found = found || reflect.TypeOf(e) == errorStringType && e.Error() == "http: server closed idle connection"
	})
	return found
}

// closedAfterGoAway reports whether err holds the error an HTTP/2 client
// returns for a stream the server counted in its GOAWAY and then closed
// the connection under: net/http's (its bundled copy of x/net's, which it
// does not export) or x/net's own GoAwayError. The stream may have been
// processed; the connection broke under it, as a reset's would. Told by
// the type's package and name, as reflection gives them.
func closedAfterGoAway(err error) bool {
	found := false
	walkErrors(err, func(e error) {
		t := reflect.TypeOf(e)
		found = found || t.PkgPath() == "net/http" && t.Name() == "http2GoAwayError" ||
			t.PkgPath() == "golang.org/x/net/http2" && t.Name() == "GoAwayError"
	})
	return found
}

// errorStringType is the type of errors.New's errors.
var errorStringType = reflect.TypeOf(errors.New(""))

// tlsAlert reports whether err is an alert the TLS peer sent: over TCP,
// crypto/tls reports one as a *net.OpError "remote error" around a type
// of its own it does not export (tls.AlertError is QUIC's only). A server
// that ended the handshake so (a version or a client certificate it
// refuses) processed nothing; once the request was written, the decision
// does not take the class for proof (see provedUnprocessed).
func tlsAlert(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "remote error" && opErr.Err != nil &&
		reflect.TypeOf(opErr.Err).PkgPath() == "crypto/tls"
}

// neverSent reports whether err proves the request never reached the server:
// the class says so, or the failure happened while dialing. (net/http's
// "server closed idle connection" proves it only beside the trace of the
// connection it was met on: see attempt.closedIdleUnwritten.)
func neverSent(err error, class attrs.ErrorClass) bool {
	if class.NotSent() {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}
