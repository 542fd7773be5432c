// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

// ScopeName is the instrumentation scope name of every Tracer and Meter that
// otelretry creates.
const ScopeName = "github.com/otelretry/otelretry-go/otelretry"

// Version is the version of this instrumentation library, the
// instrumentation scope version of every Tracer and Meter that otelretry
// creates.
//
// It always names a release: the newest "## [X.Y.Z] - DATE" heading of
// CHANGELOG.md. Between releases, while the CHANGELOG collects changes under
// "## [Unreleased]", it still names the last release; the release commit
// adds the new heading and sets Version in the same change. A test fails
// when the two disagree.
const Version = "0.3.0"
