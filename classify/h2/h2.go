// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package h2 classifies HTTP/2 stream errors for otelretry: a stream the
// server refused with REFUSED_STREAM becomes otelretry.NotProcessed, and
// every other error is left to otelretry's default rules, which keep a
// write's outcome unknown.
//
// It is a module of its own so that package otelretry never depends on
// golang.org/x/net. Plug it in with otelretry.WithClassifier:
//
//	rt := otelretry.NewTransport(base, otelretry.WithClassifier(h2.Classify))
//
// # What the protocol settles (RFC 9113)
//
// A RST_STREAM with REFUSED_STREAM (0x7) indicates "that the stream is
// being closed prior to any processing having occurred" (§8.7, §7), and
// requests on streams above the last stream identifier of a GOAWAY frame
// "are therefore guaranteed to be safe to retry" (§8.7, §6.8).
//
// Everything else leaves the outcome unknown: INTERNAL_ERROR, CANCEL,
// PROTOCOL_ERROR, a GOAWAY whose last stream identifier covers the
// request (the server may have processed it), or a connection lost after
// the request was written.
//
// # Which clients
//
// The code is read from golang.org/x/net/http2's StreamError, which
// x/net's Transport and ClientConn return. net/http's own HTTP/2 client
// (http.Transport, http.ClientConn) returns an unexported stream error
// that errors.As converts into that same type (net/http gives it an As
// method for this), so the classifier reads it too.
//
// Both clients resend a refused stream by themselves when the request can
// be replayed (no body, or GetBody), and neither reports a stream above a
// GOAWAY's last stream identifier with a typed error: their Transports
// resend it on a new connection, and a ClientConn, which cannot, ends it
// with an untyped error (the write's outcome stays unknown). The one
// exception is a connection's first stream under a GOAWAY with an error
// code: net/http ends it with a message of its own and resends it for no
// request, and otelretry reads that message itself, over net/http's
// transport. The classifier therefore sees REFUSED_STREAM when the
// base does not resend (an http.ClientConn or an x/net ClientConn) or has
// given up resending. When the body cannot be replayed, both clients
// report the refusal as text only, which the classifier does not read:
// over x/net's transport the write's outcome then stays unknown; over
// net/http's, otelretry reads net/http's words itself, as above.
package h2

import (
	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/internal/errtree"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Protocol is the value of retry.evidence.protocol for HTTP/2 evidence.
const Protocol = "h2"

// Classify is an otelretry.Classifier for HTTP/2 clients: an attempt that
// got no response because the server refused its stream (REFUSED_STREAM)
// is NotProcessed, with the code as evidence; any other answer gets the
// zero Classification.
func Classify(a otelretry.Answer) otelretry.Classification {
	if a.StatusCode == 0 {
		if e, ok := Evidence(a.Err); ok {
			return otelretry.NotProcessed(e)
		}
	}
	return otelretry.Classification{}
}

// Evidence reports whether err proves that the server did not process the
// request, and if so the evidence to record: the stream error in err's
// chain carries REFUSED_STREAM. Go's HTTP/2 clients never refuse a stream
// themselves, so the code is the server's, but for one a request's own
// body returned as it was read (a proxy's copy of an upstream's stream),
// which the clients pass on unchanged: otelretry takes no proof from an
// attempt whose body broke, whatever its Classifier says. The code is read
// by type, never from the error text.
//
// The chain is read as errors.As reads it, the first stream error found
// deciding, but past a typed nil, which is neither read nor unwrapped: a
// nil *net.OpError unwraps through its receiver, and errors.As would
// panic on it.
func Evidence(err error) (otelretry.Evidence, bool) {
	var se http2.StreamError
	found := false
	errtree.Walk(err, func(e error) bool {
		switch x := e.(type) {
		case http2.StreamError:
			se, found = x, true
		case interface{ As(any) bool }:
			found = x.As(&se) // net/http's own stream error converts itself
		}
		return !found
	})
	if !found || se.Code != http2.ErrCodeRefusedStream {
		return otelretry.Evidence{}, false
	}
	return otelretry.Evidence{Protocol: Protocol, Code: uint64(se.Code), Name: se.Code.String()}, true
}
