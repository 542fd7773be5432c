// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package spantest finds otelretry's operation, attempt and state-check
// spans among recorded spans and reads their attributes, for tests.
package spantest
