#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Proves that a module outside this repository can depend on a release,
# offline from the repository's point of view:
#
#   1. tags HEAD with scripts/release.sh (at otelretry.Version) in a scratch
#      clone, so that this repository gets no commit and no tag;
#   2. serves the tagged published modules from a file-system module proxy
#      laid out by the module proxy protocol (scripts/release-tool.sh proxy);
#   3. in a fresh module outside the repository (GOWORK=off,
#      GOFLAGS=-mod=mod), runs go get of the root, classify/h2 and
#      classify/h3 at vX.Y.Z, then builds and runs a program that uses
#      each (scripts/testdata/consumer);
#   4. runs go install github.com/otelretry/otelretry-go/cmd/retryinspect@vX.Y.Z
#      and reads the program's spans with it;
#   5. loads the packages and tests of each published module of the
#      release commit with -mod=readonly: their go.mod and go.sum need
#      nothing more.
#
# GOPROXY lists the file proxy first, then the local module cache's
# download directory, then the usual proxy for third-party modules;
# GONOSUMDB exempts the unpublished module path from the checksum
# database. Modules go to a module cache of their own under the cache
# (a tagged version here is not the published one, and must never reach
# the user's module cache), from which each run removes the previous
# run's otelretry modules.
#
#   OTELRETRY_CACHE   cache directory (default $HOME/.cache/otelretry)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${OTELRETRY_CACHE:-$HOME/.cache/otelretry}
start=$SECONDS
phase=$SECONDS
log() { printf '[release-test] %s\n' "$*"; }
lap() { log "$1: $((SECONDS - phase))s"; phase=$SECONDS; }
die() { log "FAILED: $*" >&2; exit 1; }

work=$(mktemp -d -t otelretry-release.XXXXXX)
trap 'rm -rf "$work"' EXIT

version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' otelretry/version.go)
[ -n "$version" ] || die "no Version in otelretry/version.go"
v=v$version
module=github.com/otelretry/otelretry-go

# 1. A scratch clone of HEAD, tagged as the release script tags.
git init -q "$work/repo"
git -C "$work/repo" fetch -q "$ROOT" HEAD
git -C "$work/repo" checkout -q --detach FETCH_HEAD
export GIT_AUTHOR_NAME=release-test GIT_AUTHOR_EMAIL=release-test@example.invalid
export GIT_COMMITTER_NAME=release-test GIT_COMMITTER_EMAIL=release-test@example.invalid
(cd "$work/repo" && scripts/release.sh --any-api-baseline "$version")
lap "scratch clone tagged $v"

# 2. The file-system module proxy, from the tags.
(cd "$work/repo" && scripts/release-tool.sh proxy -dir "$work/proxy" "$version")
mapfile -t dirs < <(cd "$work/repo" && scripts/release-tool.sh modules | cut -f1)
lap "file proxy"

# 3. A fresh module outside the repository.
usual_proxy=$(go env GOPROXY)
user_cache=$(go env GOMODCACHE)
export GOWORK=off GOTOOLCHAIN=local GOFLAGS="-mod=mod -modcacherw"
export GOPROXY="file://$work/proxy,file://$user_cache/cache/download,$usual_proxy"
export GONOSUMDB=$module GOPRIVATE= GONOPROXY=
export GOMODCACHE=$CACHE/release-test/modcache
# Every run releases the same version with other contents, which a module
# cache assumes never happens: the go command's index of the modules in it
# (keyed by directory) would describe an earlier run's files. So the index
# is off, and the earlier run's copy is removed.
export GODEBUG=goindex=0
for d in "$GOMODCACHE/github.com/otelretry" "$GOMODCACHE/cache/download/github.com/otelretry"; do
	[ ! -e "$d" ] || { chmod -R u+w "$d" && rm -rf "$d"; }
done

mkdir "$work/consumer"
cp scripts/testdata/consumer/main.go "$work/consumer/"
cd "$work/consumer"
printf 'module example.com/consumer\n\ngo 1.26.0\n' >go.mod
go get "$module@$v" "$module/classify/h2@$v" "$module/classify/h3@$v"
# The exporter at the OpenTelemetry version the release requires, by its
# module path: go get of a package path would stop at the file proxy (it
# resolves a package against every proxy in turn, and takes the module
# go.opentelemetry.io/otel, cached already, for the answer of the first).
go mod edit -require="go.opentelemetry.io/otel/exporters/stdout/stdouttrace@$(go list -m -f '{{.Version}}' go.opentelemetry.io/otel)"
go build -o consumer .
for m in "$module" "$module/classify/h2" "$module/classify/h3"; do
	got=$(go list -m -f '{{.Version}} {{if .Replace}}replaced{{end}}' "$m")
	[ "$got" = "$v " ] || die "$m: $got, want $v from the proxy"
done
out=$(./consumer "$work/spans.json")
log "consumer: $out"
[ "$out" = "otelretry $version: 200 OK \"ok\" after 2 attempts" ] || die "consumer printed: $out"
lap "go get, build and run of an outside module"

# 4. go install of the released inspector, which reads those spans.
GOBIN=$work/bin go install "$module/cmd/retryinspect@$v"
go version -m "$work/bin/retryinspect" | grep -E "^\s+(mod|dep)\s+$module" |
	sed 's/^\s*/[release-test]   /'
"$work/bin/retryinspect" --stdout "$work/spans.json" >"$work/inspect.txt" ||
	{ cat "$work/inspect.txt"; die "retryinspect found problems in the consumer's spans"; }
grep -q '^operation op-.* GET .* outcome return$' "$work/inspect.txt" && grep -q '^findings: none$' "$work/inspect.txt" ||
	{ cat "$work/inspect.txt"; die "retryinspect did not read the operation"; }
lap "go install $module/cmd/retryinspect@$v and a run"

# 5. The release commit's go.mod and go.sum files are complete: each
# module's packages and tests load with -mod=readonly.
git -C "$work/repo" checkout -q "$v"
for dir in "${dirs[@]}"; do
	(cd "$work/repo/$dir" && GOFLAGS="-mod=readonly -modcacherw" go list -deps -test ./... >/dev/null)
done
lap "the release commit's modules load with -mod=readonly"

log "passed in $((SECONDS - start))s"
