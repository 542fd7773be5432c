// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

// ScopeName is the instrumentation scope name of every Tracer and Meter that
// otelretry creates.
const ScopeName = "github.com/otelretry/otelretry-go/otelretry"

// Version is the version of this instrumentation library.
const Version = "0.1.0"
