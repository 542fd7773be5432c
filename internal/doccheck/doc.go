// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package doccheck holds the tests that keep the Markdown pages true to
// the repository and to the code: README.md fits on a page; every relative
// link of README.md, CONTRIBUTING.md, RELEASING.md and docs/*.md resolves
// (files and GitHub anchors), and every repository path their code spans
// name exists; the claims the README's "Gotchas" make about
// instrumentation scopes and the retry budget hold; and a fresh clone
// stays clean under the README's commands (go.work.sum complete). It has
// no code of its own; internal/readmesnippets compiles the pages' Go
// snippets, and the demo's tests hold the pages' figures of the demo.
package doccheck
