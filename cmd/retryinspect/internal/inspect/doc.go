// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package inspect groups spans of the retry contract into operations,
// checks them against the contract and summarizes them.
//
// Grouping is structural: an attempt belongs to the operation span above
// it, whatever operation id it carries (a differing id is a finding, not a
// new operation). Attempts without an operation span are grouped by trace
// and operation id.
//
// Analysis takes time and memory linear in the number of spans (plus the
// sorts): the ancestry of every span is computed once, memoized and safe
// against parent cycles, and every cross-operation check goes through a map.
package inspect
