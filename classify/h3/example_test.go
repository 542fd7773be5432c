// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"net/http"

	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Retry over HTTP/3: a POST rejected with H3_REQUEST_REJECTED is resent,
// any other reset of a POST ends check_state.
func ExampleClassify() {
	base := &http3.Transport{}
	defer base.Close()
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify))}
	_ = client
}
