// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package baselines holds the retry loops the benchmarks compare otelretry
// with that no library ships: the naive loop, and published retry budgets
// (gRPC's throttling, the AWS SDKs' quota, otelretry's v0.1 budget) inside
// a plain loop with otelretry's default bounds, so that only the budget
// differs. The storm and metastable benchmarks share them.
package baselines
