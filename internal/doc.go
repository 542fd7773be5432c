// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package internal holds helpers shared by otelretry's packages and tests:
// cowmap (a lock-free read-mostly map), meterguard (no-ops in place of
// the instruments a Meter did not make), redact (the one URL sanitizer, for
// the library and retryinspect), scripted (a RoundTripper that plays a
// fixed script on virtual time), spantest (finding operation and attempt
// spans) and spancheck (checking them in tests). None of it is public API.
package internal
