#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Takes the API baseline that scripts/apicheck.sh compares against:
#
#   scripts/apibaseline.sh [REV]
#
# writes api/*.apidiff (the export data of the published modules' public
# packages at REV, in the format of apidiff -m -w) and api/VERSION (REV's
# newest CHANGELOG release). REV defaults to the release commit of the
# current otelretry.Version: the newest commit that set the line
# `const Version = "X.Y.Z"` (otelretry/version.go), which is HEAD right
# after a release's version commit (RELEASING.md). Commit api/ afterwards.
# REV is read from git, so uncommitted changes never enter a baseline, and
# a later commit's API never enters a release's.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
rev=${1:-}
if [ -z "$rev" ]; then
	line=$(grep -m1 '^const Version = ' otelretry/version.go) ||
		{ echo "apibaseline: no const Version in otelretry/version.go" >&2; exit 1; }
	rev=$(git log -1 --format=%h -S"$line" -- otelretry/version.go)
	[ -n "$rev" ] || { echo "apibaseline: no commit sets $line (a shallow clone? give REV)" >&2; exit 1; }
	echo "apibaseline: $rev set $line"
fi
tree=$(mktemp -d -t otelretry-api.XXXXXX)
trap 'rm -rf "$tree"' EXIT
git archive "$rev" | tar -x -C "$tree"
scripts/release-tool.sh api-write -from "$tree"
git status --short -- api
