// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package spancheck checks otelretry's operation and attempt spans in tests
// (the outcome, the attempts, the protocol evidence), for the library and
// the protocol-classifier modules alike. It is apart from spantest, which
// the demo uses too, so that no program links package testing.
package spancheck
