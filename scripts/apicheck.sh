#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# API compatibility: compares the public API of the published modules with
# the baseline in api/ (the last release's, from scripts/apibaseline.sh)
# using golang.org/x/exp/apidiff, and prints every change. It fails on an
# incompatible change unless the CHANGELOG's next version may break the
# API: a new minor version before 1.0, a new major one after. The next
# version is the CHANGELOG's newest release when that is newer than the
# baseline; between releases, an [Unreleased] section with a
# "### Changed (breaking)" or "### Removed" subsection makes it the next
# minor (before 1.0) or major, and without one the next patch. Each
# incompatible change must also be named, in `code`, by such a subsection
# of [Unreleased] (or of a release after the baseline), so that recording
# one break lets no other through. New exported names are compatible.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
exec scripts/release-tool.sh api-check
