#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Builds the release tool (tools/release, a module of its own) into the
# cache and runs it in the repository root with the given arguments, for
# example: scripts/release-tool.sh check 0.3.0 (tools/release/main.go
# lists the commands). The scripts release.sh, release-test.sh,
# apicheck.sh and apibaseline.sh call it.
#
#   OTELRETRY_CACHE   build cache (default $HOME/.cache/otelretry)
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
bin=${OTELRETRY_CACHE:-$HOME/.cache/otelretry}/bin/otelretry-release
(cd tools/release && env GOWORK=off GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 go build -o "$bin" .)
exec "$bin" "$@"
