#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# The project's test command (the README's, and what .ci/run calls).
#
#   scripts/test.sh           everything: static checks, the API
#                             compatibility check, unit tests with the race
#                             detector, the browser tests, benchmark,
#                             storm, metastable and writes smoke runs, fuzzing,
#                             the
#                             release test
#                             (RELEASING.md's steps, then an outside module
#                             against the tagged release), compose
#                             validation, and the end-to-end test against
#                             real Jaeger, Collector and Prometheus
#   scripts/test.sh --no-e2e  all of that but the end-to-end stack (--unit,
#                             its former name, still works)
#   scripts/test.sh --quick   the inner loop: gofmt, go vet and go test of
#                             the root module (the library, attrs, metrics,
#                             the pages' checks), without the race
#                             detector; Go alone, nothing installed
#
# Without --quick it installs what it needs (Debian's prometheus,
# docker-compose and chromium, and builds Jaeger and the Collector from
# their Go modules into a cache); CONTRIBUTING.md gives the time each takes.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
start=$SECONDS
# The machine's CPU time since the start (user, nice, system, irq and
# softirq, from /proc/stat): a cold run is compile-bound, so each step's
# share of it says what the time goes to (CONTRIBUTING.md, "CI times").
machine_cpu() { awk '/^cpu /{ printf "%d", ($2 + $3 + $4 + $7 + $8) / 100 }' /proc/stat 2>/dev/null || echo 0; }
cpu_start=$(machine_cpu)
step() { printf '\n== %s (%ss; %s CPU-s)\n' "$*" "$((SECONDS - start))" "$(($(machine_cpu) - cpu_start))"; }

no_e2e=false
quick=false
case "${1:-}" in
"") ;;
--no-e2e) no_e2e=true ;;
--unit)
	echo "scripts/test.sh: --unit is now --no-e2e: it runs everything but the end-to-end stack, race, fuzz and release tests included" >&2
	no_e2e=true
	;;
--quick) quick=true ;;
*)
	echo "usage: scripts/test.sh [--no-e2e | --quick]" >&2
	exit 2
	;;
esac

step "room for the builds"
scripts/trim-cache.sh

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"
	echo "$unformatted"
	exit 1
fi

step "license headers"
# The two lines every Go file starts with (CONTRIBUTING.md), first, in order.
missing=$(git ls-files -z '*.go' | xargs -0 awk -v l1='// Copyright The otelretry Authors' -v l2='// SPDX-License-Identifier: Apache-2.0' '
	FNR == 1 { if (prev != "" && n < 2) print prev; prev = FILENAME; n = 0 }
	{ n++ }
	FNR == 1 && $0 != l1 { print FILENAME }
	FNR == 2 && $0 != l2 { print FILENAME }
	FNR == 2 { nextfile }
	END { if (prev != "" && n < 2) print prev }' | sort -u)
if [ -n "$missing" ]; then
	echo "files that do not start with the two-line license header:"
	echo "$missing"
	exit 1
fi

# The end-to-end stage's stack (Jaeger, the Collector, VictoriaLogs) takes
# most of a cold run's build time. Its Debian packages are installed now, in
# the foreground (one apt-get at a time), and its builds start in the
# background at the lowest CPU priority, so that they take only the cores
# the stages before it leave idle; the end-to-end stage waits for them.
stack_pid= stack_log=
stop_stack_build() {
	[ -z "$stack_pid" ] || kill -- -"$stack_pid" 2>/dev/null || true
	[ -z "$stack_log" ] || rm -f "$stack_log" # on every exit, a failed one's too
}
if ! $quick && ! $no_e2e; then
	step "the end-to-end stack: Debian packages, then its builds in the background"
	scripts/stack.sh packages
	stack_log=$(mktemp -t otelretry-stack-install.XXXXXX)
	# setsid gives the builds a process group to stop, and a session: with
	# the kernel's autogroups a session is its own scheduling group, which
	# nice alone does not lower, so the group's own nice is raised too.
	setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true; exec nice -n 19 scripts/stack.sh install' >"$stack_log" 2>&1 &
	stack_pid=$!
	trap stop_stack_build EXIT
fi

if $quick; then
	export GOWORK=off
	step "go vet (root module)"
	go vet ./...
	step "go test (root module, without -race; scripts/test.sh runs every module under -race)"
	go test -count=1 ./...
	step "quick tests passed"
	exit 0
fi

# Every build with -trimpath: a dependency's key in the build cache is then
# its module and version instead of its directory, so the release test's
# trial, whose module cache is a directory of its own (RELEASING.md; it
# builds with -trimpath), finds the dependencies this run has compiled
# instead of compiling them again (CONTRIBUTING.md, "CI times").
GOFLAGS="$(go env GOFLAGS) -trimpath"
export GOFLAGS

# The race and fuzz builds compile third-party packages without
# optimizations, inlining or DWARF (as scripts/stack.sh builds the stack):
# the same code under the same checks, for less compiling (CONTRIBUTING.md,
# "CI times"); a failure's stack trace keeps its files and lines, which
# come from the binary's line table. The standard library and this
# repository's packages keep the defaults, so the code under test is
# compiled as its users compile it. The other builds keep the defaults
# too: the release test's trial and the go commands the race tests run (go
# run of the demo) share their packages, and the allocation guards count
# what an optimized build allocates.
unoptimized_deps=('-gcflags=all=-N -l -dwarf=false' -gcflags=std= '-gcflags=github.com/otelretry/otelretry-go/...=')
race=(-race "${unoptimized_deps[@]}")
# internal/readmesnippets' tests build and vet the snippets under -race with
# go commands of their own, which read these flags from GOFLAGS.
race_goflags="$GOFLAGS$(printf " '%s'" "${unoptimized_deps[@]}")"

# The repository's Go modules: the library, and the modules that keep
# their dependencies out of it. Each is checked as its users see it
# (GOWORK=off); go.work only lets the README's commands run from the root.
modules=(. cmd/retryinspect cmd/retryinspect/htmltest examples/demo internal/e2e internal/readmesnippets internal/realclients internal/sdkclients benchmarks classify/h2 classify/h3 tools/release)
export GOWORK=off

# Every module's dependencies, fetched in the background: with an empty
# module cache each module's first go command would fetch its modules
# before it compiles anything (about 30 s in all); these fetches overlap
# the compiling of the modules before it instead. A fetch that fails here
# fails again, and is reported, in the foreground.
download_pid=
stop_download() { [ -z "$download_pid" ] || kill -- -"$download_pid" 2>/dev/null || true; }
setsid bash -c 'for m in "$@"; do (cd "$m" && go mod download); done' download "${modules[@]}" >/dev/null 2>&1 &
download_pid=$!
trap 'stop_download; stop_stack_build' EXIT

step "library go.mod: OpenTelemetry, otelhttp and their dependencies only"
go run ./scripts/checkmod

# go vet, every analyzer, on every module. A module whose every package has
# tests and runs them under -race below is vetted there (go test -vet=all,
# the same analyzers): a separate go vet would compile its dependencies a
# second time, without -race, which is most of a cold run's vet (the cloud
# SDKs, quic-go).
vetted_by_race_tests=(cmd/retryinspect/htmltest examples/demo internal/realclients internal/sdkclients classify/h2 classify/h3)
step "go vet (every module; ${vetted_by_race_tests[*]} with their race tests)"
for m in "${modules[@]}"; do
	case " ${vetted_by_race_tests[*]} " in
	*" $m "*)
		untested=$(cd "$m" && go list -f '{{if not (or .TestGoFiles .XTestGoFiles)}}{{.ImportPath}}{{end}}' ./...)
		[ -z "$untested" ] || {
			echo "go test -vet=all vets only packages with tests; these have none: $untested" >&2
			exit 1
		}
		continue
		;;
	esac
	if [ "$m" = internal/readmesnippets ]; then
		# Its tests run under -race: vetted in that variant too, so that
		# its dependencies (the cloud SDKs) are compiled once.
		(cd "$m" && GOFLAGS="$race_goflags" go vet -race ./...)
		continue
	fi
	(cd "$m" && go vet ./...)
done

step "the pages: README.md's length, every relative link (internal/doccheck); the Go snippets of README.md and docs/, extracted, up to date, built and vetted (internal/readmesnippets)"
go test -count=1 ./internal/doccheck
# Under -race, as internal/sdkclients, internal/realclients and classify/h3
# are: its dependencies are theirs, compiled once in one variant (its tests'
# go build and go vet of the snippets take the test binary's -race).
(cd internal/readmesnippets && GOFLAGS="$race_goflags" go test -race -count=1 ./...)

step "API compatibility against api/ (the last release), and the release tool's tests"
(cd tools/release && go test -count=1 ./...)
scripts/apicheck.sh

step "go test -race (library, examples, retryinspect, protocol classifiers)"
go test "${race[@]}" -count=1 ./...
(cd cmd/retryinspect && go test "${race[@]}" -count=1 ./...)
(cd examples/demo && go test "${race[@]}" -vet=all -count=1 ./...)
(cd classify/h2 && go test "${race[@]}" -vet=all -count=1 ./...)
(cd classify/h3 && go test "${race[@]}" -vet=all -count=1 ./...)
# Real third-party clients over otelretry; the tests against the stack skip here.
(cd internal/realclients && go test "${race[@]}" -vet=all -count=1 ./...)
# Cloud SDKs over otelretry, against fakes of their protocols on 127.0.0.1.
(cd internal/sdkclients && go test "${race[@]}" -vet=all -count=1 ./...)
# The stress tests at full size, which the race detector's own limits make
# us run smaller under -race (see otelretry/race_test.go), and the
# allocation guards, whose counts its sync.Pool blurs.
go test -count=1 -run 'CancellationRaces|ConcurrentOperationsWithCancellations|ConcurrentChaos|PathAllocations|LogEventAllocations' ./otelretry

step "retryinspect's HTML report in headless Chromium (cmd/retryinspect/htmltest)"
# Debian's chromium, driven with chromedp from the module's tests; they
# write artifacts/retryinspect-report.png and .html, and log the size and
# load time of the pages of 1 000 and 10 000 operations. Without a browser
# they skip, except under CI=true, where they fail.
if ! command -v chromium >/dev/null 2>&1; then
	echo "installing Debian's chromium for the browser tests" >&2
	scripts/apt-install.sh chromium fonts-liberation
fi
(cd cmd/retryinspect/htmltest && go test "${race[@]}" -vet=all -count=1 -v ./...)

step "benchmarks module: tests, one iteration of every benchmark, storm, metastable and writes smoke"
# The storm's, the metastable's and the writes' smoke runs are their
# packages' TestSmoke (go run ./storm -smoke, ./metastable -smoke, ./writes -smoke); the writes' checks the
# targets that hold whatever the timing (no write applied twice by
# otelretry, every write it could resend applied once and answered).
(cd benchmarks && go test -count=1 ./... && go test ./overhead -run '^$' -bench . -benchtime=1x >/dev/null)
go test -run '^$' -bench . -benchtime=1x ./metrics >/dev/null

step "fuzz targets, briefly"
# fuzz DIR TARGET EXECS: EXECS executions of TARGET in DIR (about five
# seconds of each on 2 cores), quiet unless it fails, when its whole output
# (the failing input's file among it) is printed. A count, not a duration:
# go1.26's fuzzing coordinator can fail a target that found nothing with
# "context deadline exceeded" when a duration ends while a worker is busy
# (go.dev/issue/75804); a count never arms that deadline.
fuzz() {
	local log
	log=$(mktemp)
	if ! (cd "$1" && go test . "${unoptimized_deps[@]}" -run '^$' -fuzz "^$2\$" -fuzztime "$3x") >"$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		echo "fuzz $1 $2 failed" >&2
		return 1
	fi
	rm -f "$log"
}
fuzz otelretry FuzzDecide 20000
fuzz otelretry FuzzTransportInvariants 3000
fuzz otelretry FuzzTransportTelemetry 3000
fuzz otelretry FuzzScrubKeepsNoQuotedServerValue 20000
fuzz otelretry FuzzAQueryValueInAnySpelling 20000
fuzz otelretry FuzzParseRetryAfter 40000
fuzz otelretry FuzzParseRetryAfterMs 40000
fuzz internal/redact FuzzURL 40000
fuzz internal/redact FuzzTextAroundAURL 40000
# The readers' targets have a package of their own, so that their
# instrumented build is the readers and what they import, not the
# fixtures' SDK and exporters (CONTRIBUTING.md, "CI times").
for target in FuzzStdout FuzzOTLP FuzzJaeger; do
	fuzz cmd/retryinspect/internal/readfuzz "$target" 10000
done
fuzz cmd/retryinspect/internal/readfuzz FuzzOTLPLogs 2000
fuzz cmd/retryinspect/internal/readfuzz FuzzVictoriaLogs 5000

step "release: RELEASING.md's steps in a scratch clone; a module outside the repository builds against the tags (file-system module proxy)"
scripts/release-test.sh

step "docker-compose.yaml validation (no container engine: config only)"
scripts/validate-compose.sh
# Again with a python3 first on PATH that has no YAML module (a venv's):
# the checks read the file with Debian's Python, not that one.
PATH="$PWD/scripts/testdata/python3-without-yaml:$PATH" scripts/validate-compose.sh

if ! $no_e2e; then
	step "end-to-end: Jaeger, Collector, Prometheus on 127.0.0.1"
	if ! wait "$stack_pid"; then
		cat "$stack_log"
		echo "the stack's background build failed" >&2
		exit 1
	fi
	stack_pid=
	echo "the stack's background build:"
	grep -E 'built in|cached|install done' "$stack_log" || tail -n 1 "$stack_log"
	rm -f "$stack_log"
	scripts/e2e.sh
fi

step "all tests passed"
