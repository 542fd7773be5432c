// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package scripted provides an http.RoundTripper that plays a fixed script
// of results, for tests that run on virtual time (testing/synctest): each
// step takes exactly its Delay, so timelines are exact and instant.
package scripted
