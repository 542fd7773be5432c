// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package cowmap provides a read-mostly map whose reads take no lock and
// allocate nothing: the map is immutable and replaced whole (copy on write)
// when a key is added, so each insert costs a copy of the whole map. It suits
// small key sets that are filled once and read on every request, such as
// metric label sets; not open-ended ones such as hosts (the retry budget
// keeps its own bounded table).
package cowmap
