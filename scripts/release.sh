#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Tags a release: scripts/release.sh X.Y.Z, in a clean checkout of the
# commit that sets otelretry.Version to X.Y.Z, heads the CHANGELOG with
# "## [X.Y.Z] - DATE" and holds the release's API baseline (api/VERSION
# X.Y.Z, from scripts/apibaseline.sh). It
#
#   1. checks that Version, the CHANGELOG and the published modules'
#      requirements on each other agree (between releases each requires
#      the others at v0.0.0-00010101000000-000000000000 with a replace
#      directive to its directory, so that GOWORK=off builds and tests
#      use the tree);
#   2. makes the release commit, a child of HEAD that no branch takes: each
#      published module requires the others at vX.Y.Z, without replace
#      directives (go install refuses a module that has them), and its
#      go.sum holds their hashes;
#   3. tags that commit in dependency order: vX.Y.Z for the root, then
#      classify/h2/vX.Y.Z, classify/h3/vX.Y.Z, cmd/retryinspect/vX.Y.Z;
#   4. prints what to push. It pushes nothing, and leaves the branch and
#      the working tree as they were.
#
# The published modules and their order are tools/release/modules.go's.
# RELEASING.md gives the whole procedure; scripts/release-test.sh runs it
# in a scratch clone and builds a module outside the repository against
# the tags.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
die() { echo "release: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: scripts/release.sh X.Y.Z"
version=${1#v}
[ -z "$(git status --porcelain)" ] || die "the working tree is not clean"

scripts/release-tool.sh check "$version"
baseline=$(cat api/VERSION 2>/dev/null || true)
[ "$baseline" = "$version" ] ||
	die "api/VERSION is '$baseline', not $version: take the release's API baseline (scripts/apibaseline.sh) and commit it first (RELEASING.md)"
# The version commit itself: between releases Version, the CHANGELOG and
# api/VERSION agree on every commit, and a later one may have changed the
# API the baseline holds.
[ "$(git rev-parse --is-shallow-repository)" = false ] ||
	die "this is a shallow clone, whose history cannot tell the version commit: fetch it (git fetch --unshallow) first"
version_commit=$(git log -1 --format=%H -- otelretry/version.go api/VERSION)
[ "$(git rev-parse HEAD)" = "$version_commit" ] ||
	die "HEAD is not $version's version commit ($version_commit, the last to change otelretry/version.go or api/VERSION): release that commit"

tags=()
while IFS=$'\t' read -r _ _ prefix; do
	tags+=("${prefix}v$version")
done < <(scripts/release-tool.sh modules)
for tag in "${tags[@]}"; do
	if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
		die "tag $tag exists"
	fi
done

start=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
git checkout -q --detach
trap 'git checkout -q -f "$start"' EXIT

scripts/release-tool.sh prepare "$version"
scripts/release-tool.sh check -released "$version"
git commit -q -a -m "Release v$version: the published modules require each other at v$version, without replace directives"
for tag in "${tags[@]}"; do
	git tag -a -m "otelretry-go $tag" "$tag"
done
commit=$(git rev-parse HEAD)

git checkout -q "$start"
trap - EXIT
echo "release: tagged $commit (the release commit; $start is unchanged):"
git tag --points-at "$commit" | sed 's/^/  /'
echo "release: push the tags, the root's first, so that each module finds what it requires:"
for tag in "${tags[@]}"; do
	echo "  git push origin $tag"
done
