// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package dialpeer tells which peer net/http's Transport dials for a URL,
// without dialing: the oracle the dependency key's tests (otelretry's
// budget key, retryinspect's dependency name) are checked against, so
// that one host is one dependency however it is spelled, and two hosts
// never one.
package dialpeer
