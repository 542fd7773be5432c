#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Takes the API baseline that scripts/apicheck.sh compares against:
#
#   scripts/apibaseline.sh [REV]    default HEAD
#
# writes api/*.apidiff (the export data of the published modules' public
# packages at REV, in the format of apidiff -m -w) and api/VERSION (REV's
# newest CHANGELOG release). Run it on the release commit, the one that
# sets Version and the CHANGELOG heading, and commit api/ with it. REV is
# read from git, so uncommitted changes never enter a baseline.
set -euo pipefail

cd "$(dirname "$0")/.."
rev=${1:-HEAD}
tree=$(mktemp -d -t otelretry-api.XXXXXX)
trap 'rm -rf "$tree"' EXIT
git archive "$rev" | tar -x -C "$tree"
scripts/release-tool.sh api-write -from "$tree"
git status --short -- api
