// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package render writes an inspection report: as text for people (Text),
// as one JSON document for machines (JSON), and as one self-contained HTML
// page for a browser (HTML), with timelines of the operations, an overview
// of the incident and the findings linked to the operations they name.
//
// The three share one model, the inspector's Report, and the text and HTML
// reports share their wording: the header line, the operation titles, the
// attempt tables and the findings' locations are laid out by the same
// helpers, and every value from the input is escaped by the same function
// before the HTML template escapes it again for its context.
package render
