// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package silentport opens a loopback port that accepts connections,
// reads what it is sent and never answers, for tests: a Collector or a
// dependency that hangs, which an exporter or a client waiting for it
// would wait on until its own timeout.
package silentport
