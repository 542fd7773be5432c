#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the writes benchmark (issue 42): 2,000 POSTs through each
# configuration in turn, against a loopback server that deduplicates by
# idempotency key, with seeded faults; about 35 s in all on 2 cores.
#   bash benchmarks/writes.sh            # full run: docs/benchmarks.md's table
#   bash benchmarks/writes.sh -smoke     # a few seconds, for CI (figures meaningless)
# Extra flags go to the command (see: go run ./writes -h). It prints the
# machine it ran on and the load average at its start and end.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
bin="$(mktemp -d)/writes"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./writes
"$bin" "$@"
