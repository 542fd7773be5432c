// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package spantest finds otelretry's operation, attempt and state-check
// spans among recorded spans and reads their attributes, for tests.
// The Assert* helpers check them in tests, for the library and the
// protocol-classifier modules alike.
package spantest
