// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package h3 classifies the errors of quic-go's HTTP/3 client for
// otelretry: the one error that proves a request was never processed
// becomes otelretry.NotProcessed, and every other error is left to
// otelretry's default rules, which keep a write's outcome unknown.
//
// It is a module of its own so that package otelretry never depends on
// quic-go. Plug it in with otelretry.WithClassifier:
//
//	base := &http3.Transport{}
//	rt := otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify))
//
// # What the protocol settles (RFC 9114)
//
// A server that rejects a request "without performing any application
// processing" resets its stream with H3_REQUEST_REJECTED (0x10b), and
// "MUST NOT use the H3_REQUEST_REJECTED error code for requests that were
// partially or fully processed" (§4.1.1, §8.1). Requests on streams at or
// above the identifier of a GOAWAY frame were not processed either (§5.2);
// quic-go's server resets such streams with H3_REQUEST_REJECTED, so they
// are recognized by that code. quic-go's client reports a GOAWAY that
// stopped a request before its stream was opened only with an unexported
// error, which http3.Transport resends by itself.
//
// Everything else leaves the outcome unknown: H3_REQUEST_CANCELLED
// (0x10c), which a server may send after partial processing,
// H3_INTERNAL_ERROR (0x102), H3_NO_ERROR on a connection closed after a
// GOAWAY, an idle timeout or a connection lost after the request was
// written. Only a reset of the stream's response side is read: a
// STOP_SENDING with H3_REQUEST_REJECTED alone stops the request's body,
// and quic-go's client returns no error of it.
//
// # Resends below otelretry
//
// http3.Transport itself resends a request once when its stream was
// rejected and the request can be replayed (no body, or GetBody). The
// classifier sees the rejection when that resend was rejected too, when
// quic-go could not replay the body, or when the base is an
// *http3.ClientConn, which never resends.
package h3

import (
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/internal/errtree"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Protocol is the value of retry.evidence.protocol for HTTP/3 evidence.
const Protocol = "h3"

// Classify is an otelretry.Classifier for quic-go's HTTP/3 client: an
// attempt that got no response because the server reset its stream with
// H3_REQUEST_REJECTED is NotProcessed, with the code as evidence; any
// other answer gets the zero Classification. A connection the server
// closed with that code is no proof: the close names no request, and
// reaches every stream open on it, processed or not.
func Classify(a otelretry.Answer) otelretry.Classification {
	if a.StatusCode == 0 {
		if e, ok := Evidence(a.Err); ok {
			return otelretry.NotProcessed(e)
		}
	}
	return otelretry.Classification{}
}

// Evidence reports whether err proves that the server did not process the
// request, and if so the evidence to record: the server (never the
// client: Remote must be set) reset the request's stream with
// H3_REQUEST_REJECTED. It reads the code from the first *http3.Error or
// *quic.StreamError in err's chain, never from the error text; an error
// that holds a *quic.ApplicationError, the connection's close, proves
// nothing of one request, whatever its code.
func Evidence(err error) (otelretry.Evidence, bool) {
	if connectionClosed(err) {
		return otelretry.Evidence{}, false
	}
	code, remote, ok := errorCode(err)
	if !ok || !remote || code != http3.ErrCodeRequestRejected {
		return otelretry.Evidence{}, false
	}
	return otelretry.Evidence{Protocol: Protocol, Code: uint64(code), Name: code.String()}, true
}

// errorCode returns the HTTP/3 error code of the first stream error in
// err's chain, as errors.As walks it (depth first, in order), and whether
// the peer sent it. quic-go wraps its stream errors in an *http3.Error on
// the HTTP/3 paths, and returns them bare from its QUIC stream API; a
// layer that joins errors may carry both kinds, and the first one found
// is the one read, whatever its kind.
func errorCode(err error) (code http3.ErrCode, remote, ok bool) {
	errtree.Walk(err, func(e error) bool {
		code, remote, ok = streamErrorAt(e)
		return !ok
	})
	return code, remote, ok
}

// connectionClosed reports whether err's chain holds a *quic.ApplicationError,
// as errors.As would find one, or may: a tree too large to read to its
// end (errtree.Nodes) is taken as holding one, so that no proof is
// claimed from the part read.
func connectionClosed(err error) (closed bool) {
	complete := errtree.Walk(err, func(e error) bool {
		var app *quic.ApplicationError
		switch x := e.(type) {
		case *quic.ApplicationError:
			closed = x != nil
		case interface{ As(any) bool }:
			closed = x.As(&app) && app != nil
		}
		return !closed
	})
	return closed || !complete
}

// streamErrorAt reads err itself, not its chain, as errors.As would at
// one step: either stream error's type, or an As method that gives one.
// err is never a nil, typed or not: errtree.Walk visits none.
func streamErrorAt(err error) (code http3.ErrCode, remote, ok bool) {
	switch e := err.(type) {
	case *http3.Error:
		return e.ErrorCode, e.Remote, true
	case *quic.StreamError:
		return http3.ErrCode(e.ErrorCode), e.Remote, true
	}
	if as, ok := err.(interface{ As(any) bool }); ok {
		var h3Err *http3.Error
		if as.As(&h3Err) && h3Err != nil {
			return h3Err.ErrorCode, h3Err.Remote, true
		}
		var streamErr *quic.StreamError
		if as.As(&streamErr) && streamErr != nil {
			return http3.ErrCode(streamErr.ErrorCode), streamErr.Remote, true
		}
	}
	return 0, false, false
}
