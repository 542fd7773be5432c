// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package hostname writes a host's name one way however it is spelled:
// the one rule the transport's dependency key, its server.address metric
// label and retryinspect's dependency names share, so that they never
// drift apart.
package hostname
