#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the release procedure as RELEASING.md gives it, so that the two
# cannot drift, and proves that a module outside this repository can depend
# on the release:
#
#   1. clones HEAD into a scratch directory (this repository gets no commit
#      and no tag) and, in it, runs every ```sh block of RELEASING.md in
#      order in one shell, with VERSION set to the next minor version after
#      otelretry.Version and TMPDIR inside the scratch directory (the only
#      environment added): the version commit, the tags, and the trial
#      through a file-system module proxy;
#   2. where RELEASING.md has its comment "<!-- release-test: ... -->" (in
#      the trial's outside module, with the trial's environment), runs
#      checks: the root and both classifiers resolve at vX.Y.Z from the
#      proxy; a program that uses each (scripts/testdata/consumer) builds
#      and runs, and the installed retryinspect reads its spans; the
#      README's install lines (the ```sh blocks of "Set up on a fresh
#      machine": the one with @latest, against the proxy, and the one with
#      -replace, against the scratch clone) work; each published module of
#      the release commit loads with -mod=readonly.
#
# Everything it writes, the trial's module cache included, is under the
# scratch directory, which it removes at exit.
set -euo pipefail

module=github.com/otelretry/otelretry-go
log() { printf '[release-test] %s\n' "$*"; }
die() { log "FAILED: $*" >&2; exit 1; }

# checks WORK VERSION 'DIR...', run by the steps at RELEASING.md's comment, in the
# trial module: see 2. above.
checks() {
	local work=$1 version=$2 clone=$1/otelretry-go m got out dir
	log "RELEASING.md's steps ran up to the comment; checking the trial module"
	for m in $module $module/classify/h2 $module/classify/h3; do
		got=$(go list -m -f '{{.Version}} {{if .Replace}}replaced{{end}}' "$m")
		[ "$got" = "v$version " ] || die "$m: $got, want v$version from the file proxy"
	done
	installed bin/retryinspect "$version" || die "bin/retryinspect is not $module/cmd/retryinspect v$version"

	# A program that uses the root and both classifiers, with the exporter
	# at the OpenTelemetry version the release requires (by its module path:
	# go get of a package path would stop at the module cache's download
	# directory, which holds the module go.opentelemetry.io/otel).
	cp "$clone/scripts/testdata/consumer/main.go" .
	go mod edit -require="go.opentelemetry.io/otel/exporters/stdout/stdouttrace@$(go list -m -f '{{.Version}}' go.opentelemetry.io/otel)"
	go build -mod=mod -o consumer .
	out=$(./consumer "$work/spans.json")
	log "consumer: $out"
	[ "$out" = "otelretry $version: 200 OK \"ok\" after 2 attempts" ] || die "consumer printed: $out"
	bin/retryinspect --stdout "$work/spans.json" >"$work/inspect.txt" ||
		{ cat "$work/inspect.txt"; die "retryinspect found problems in the consumer's spans"; }
	grep -q '^operation op-.* GET .* outcome return$' "$work/inspect.txt" && grep -q '^findings: none$' "$work/inspect.txt" ||
		{ cat "$work/inspect.txt"; die "retryinspect did not read the operation"; }
	log "the consumer built against v$version, and the released retryinspect read its spans"

	# The README's install lines: once published (@latest is the proxy's
	# one version), and from a checkout at ../otelretry-go (the scratch
	# clone, at the version commit).
	mkdir "$work/latest" && cd "$work/latest"
	go mod init example.com/latest 2>/dev/null
	GOBIN=$work/latest/bin bash -euo pipefail "$work/readme-published.sh"
	got=$(go list -m -f '{{.Version}}' $module)
	[ "$got" = "v$version" ] || die "the README's @latest lines: $module $got, want v$version"
	installed bin/retryinspect "$version" || die "the README's @latest lines installed no retryinspect v$version"
	mkdir "$work/app" && cd "$work/app"
	go mod init example.com/app 2>/dev/null
	printf 'package main\n\nimport (\n\t"fmt"\n\n\t"%s/otelretry"\n)\n\nfunc main() { fmt.Println(otelretry.Version) }\n' $module >main.go
	GOBIN=$work/app/bin bash -euo pipefail "$work/readme-checkout.sh"
	[ "$(go run .)" = "$version" ] || die "the README's lines for a checkout: the program did not print $version"
	[ -x bin/retryinspect ] || die "the README's lines for a checkout installed no retryinspect"
	# A classifier, with the -replace of its own that the README gives.
	go mod edit -replace $module/classify/h2=../otelretry-go/classify/h2
	printf 'package main\n\nimport _ "%s/classify/h2"\n' $module >h2.go
	go mod tidy 2>/dev/null
	go build -o /dev/null . || die "the README's lines for a checkout: classify/h2 does not build"
	log "the README's install lines work, @latest and from a checkout"

	# The release commit's go.mod and go.sum files are complete.
	git -C "$clone" -c advice.detachedHead=false checkout -q "v$version"
	for dir in $3; do
		(cd "$clone/$dir" && GOFLAGS="-mod=readonly -modcacherw" go list -deps -test ./... >/dev/null)
	done
	git -C "$clone" checkout -q -
	log "the release commit's modules load with -mod=readonly"
}

# installed BIN VERSION: BIN is retryinspect built from its module at vVERSION.
installed() {
	go version -m "$1" | grep -Eq "^\s+mod\s+$module/cmd/retryinspect\s+v$2\s"
}

if [ "${1:-}" = "--checks" ]; then
	checks "$2" "$3" "$4"
	exit
fi

# blocks FILE LANG DIR [SECTION]: writes the ```LANG blocks of a Markdown
# file (under the "## SECTION" heading only, when given) to DIR/NN.sh, in
# order, each starting with a comment that gives its line, and an empty
# DIR/NN.checks where the file has a "<!-- release-test: ... -->" comment.
blocks() {
	mkdir -p "$3"
	awk -v lang="$2" -v dir="$3" -v section="${4:-}" '
		BEGIN { in_section = (section == "") }
		in_block && /^```[[:space:]]*$/ { in_block = 0; close(out); next }
		in_block { print > out; next }
		/^## / { in_section = (section == "" || $0 == "## " section) }
		!in_section { next }
		$0 == "```" lang {
			in_block = 1; out = sprintf("%s/%02d.sh", dir, ++n)
			printf "# %s, line %d\n", FILENAME, NR + 1 > out; next
		}
		/^<!-- release-test: .* -->$/ { out = sprintf("%s/%02d.checks", dir, ++n); printf "" > out; close(out) }
	' "$1"
}

cd "$(dirname "$(readlink -f "$0")")/.."
ROOT=$PWD
start=$SECONDS

work=$(mktemp -d -t otelretry-release.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

current=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' otelretry/version.go)
[[ $current =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || die "no release Version in otelretry/version.go"
version=${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1)).0

# The scratch clone, named as the README's lines for a checkout expect it.
clone=$work/otelretry-go
git init -q "$clone"
git -C "$clone" fetch -q "$ROOT" HEAD
git -C "$clone" checkout -q --detach FETCH_HEAD
git -C "$clone" config user.name release-test
git -C "$clone" config user.email release-test@example.invalid
mkdir "$work/tmp"
mapfile -t dirs < <(scripts/release-tool.sh modules | cut -f1)

(cd "$clone" && blocks RELEASING.md sh "$work/releasing" && blocks README.md sh "$work/readme" "Set up on a fresh machine")
compgen -G "$work/releasing/*.sh" >/dev/null || die "RELEASING.md has no \`\`\`sh block"
compgen -G "$work/releasing/*.checks" >/dev/null || die "RELEASING.md has no <!-- release-test: ... --> comment for the checks"
published=$(grep -l -e '@latest' "$work/readme"/*.sh 2>/dev/null | head -1 || true)
checkout=$(grep -l -e '-replace' "$work/readme"/*.sh 2>/dev/null | head -1 || true)
[ -n "$published" ] && [ -n "$checkout" ] ||
	die "README.md's \"Set up on a fresh machine\" lacks its \`\`\`sh block with @latest or its block with -replace"
cp "$published" "$work/readme-published.sh"
cp "$checkout" "$work/readme-checkout.sh"

for f in "$work/releasing"/*; do
	case $f in
	*.checks) printf '%q --checks %q %q %q\n' "$ROOT/scripts/release-test.sh" "$work" "$version" "${dirs[*]}" ;;
	*) cat "$f" ;;
	esac
done >"$work/steps.sh"
log "v$version in a scratch clone of HEAD: RELEASING.md's steps"
(cd "$clone" && env VERSION="$version" TMPDIR="$work/tmp" bash -euo pipefail "$work/steps.sh")
[ -z "$(git -C "$clone" status --porcelain)" ] || die "the scratch clone is not clean after the steps"
log "passed in $((SECONDS - start))s"
