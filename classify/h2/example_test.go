// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"net/http"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Retry over HTTP/2 with the classifier first and a caller's own rules
// after it: the first non-zero Classification wins.
func ExampleClassify() {
	own := func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode == http.StatusConflict {
			return otelretry.NotRetryable()
		}
		return otelretry.Classification{}
	}
	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
		otelretry.WithClassifier(h2.Classify, own))}
	_ = client
}
