// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package baselines

import (
	"net"
	"net/http"
	"time"
)

// NewBase returns a fresh transport with the same settings for every
// configuration: a large idle pool so that connection reuse is never the
// bottleneck on loopback.
func NewBase() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2000,
		MaxIdleConnsPerHost: 2000,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
}
