#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the retry-storm benchmark: every configuration, one after
# another, against its own loopback server; about 2.5 min in all.
#   bash benchmarks/storm.sh            # full run, one client: docs/benchmarks.md's table
#   bash benchmarks/storm.sh -clients 100 -outage-503 6s
#                                       # fleet rows: 100 clients of 2 op/s,
#                                       # 12 operations each in the outage (≈ 3 min)
#   bash benchmarks/storm.sh -smoke     # a few seconds, for CI (figures meaningless)
# Extra flags go to the command (see: go run ./storm -h).
# The run is latency-sensitive (20 ms service time, 1 s deadline): it asks
# for a higher CPU priority when it may, and flags a configuration whose load
# generator fell behind (another process was using the cores).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
bin="$(mktemp -d)/storm"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./storm
if [ "$(id -u)" = 0 ]; then
  nice -n -10 "$bin" "$@"
else
  "$bin" "$@"
fi
