// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/layers.md (section "HTTP/2 and HTTP/3: the protocol's knowledge boundary", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
	"github.com/quic-go/quic-go/http3"
	"net/http"
)

func snippetLayersHttp2AndHttp3TheProtocolSKnowledgeBoundary1() {
	// HTTP/3: the classifier proves a stream's rejection; otelretry resends it.
	h3Client := &http.Client{Transport: otelretry.NewTransport(&http3.Transport{},
		otelretry.WithClassifier(h3.Classify))}

	// HTTP/2 over net/http (or x/net), with a classifier of your own after h2's.
	yours := func(a otelretry.Answer) otelretry.Classification { return otelretry.Classification{} }
	h2Client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithClassifier(h2.Classify, yours))}
	_ = h3Client
	_ = yours
	_ = h2Client
}
