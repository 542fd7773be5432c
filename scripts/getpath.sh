#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Which files of the otelretry package one request passes through, and how
# often it switches between them: a runtime trace (Delve's, built from
# tools/dlv) of the package's functions while a test runs, read by
# scripts/getpath. CONTRIBUTING.md gives the figures.
#   scripts/getpath.sh                       # TestOneSuccessfulGET, plain and hedged
#   scripts/getpath.sh 'TestSeedReadTimeline' # any test of the package
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
export GOWORK=off
cache="${XDG_CACHE_HOME:-$HOME/.cache}/otelretry-getpath"
mkdir -p "$cache"
(cd tools/dlv && go build -o "$cache/dlv" github.com/go-delve/delve/cmd/dlv)
# No inlining and no optimization, so that every call is seen.
(cd otelretry && go test -c -o "$cache/otelretry.test" -gcflags='all=-N -l' .)
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=('^TestOneSuccessfulGET$/^plain$' '^TestOneSuccessfulGET$/^hedged$')
for run in "${runs[@]}"; do
	echo "== $run"
	(cd otelretry && "$cache/dlv" trace --exec "$cache/otelretry.test" --stack 0 \
		'github.com/otelretry/otelretry-go/otelretry\.' -- -test.run "$run" -test.count 1 2>&1) |
		go run ./scripts/getpath -dir otelretry
done
