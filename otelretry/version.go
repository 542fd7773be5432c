// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

// ScopeName is the instrumentation scope name of every Tracer, Meter and
// Logger that otelretry creates: the operation and state_check spans, the
// retry.* metrics and the log events. The attempt spans are otelhttp's
// CLIENT spans and come out under otelhttp's scope
// ("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"), unless
// WithoutClientSpans makes them otelretry's own. To select every span
// otelretry writes, select those that carry retry.operation.id, or take both
// scope names.
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
