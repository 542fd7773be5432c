#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Makes room for a run's builds when Go's build cache has filled the disk:
# go trims only the entries unused for five days, so a machine that runs
# many builds a day fills its disk, and every build then fails with "no
# space left on device". With less than OTELRETRY_MIN_FREE_GB (default 20)
# free where the cache lives, it removes the entries unused for a day (go
# marks an entry used at most once an hour), then, still short of room,
# the whole cache (`go clean -cache`). scripts/test.sh runs it first.
set -euo pipefail

min_kb=$((${OTELRETRY_MIN_FREE_GB:-20} * 1024 * 1024))
cache=$(go env GOCACHE)
[ -d "$cache" ] || exit 0
free_kb() { df -Pk "$cache" | awk 'NR == 2 { print $4 }'; }

free=$(free_kb)
[ "$free" -lt "$min_kb" ] || exit 0
echo "[trim-cache] $((free / 1024)) MB free: removing the build cache's entries unused for a day ($cache)" >&2
find "$cache" -type f -mmin +1440 -delete 2>/dev/null || true
free=$(free_kb)
[ "$free" -lt "$min_kb" ] || exit 0
echo "[trim-cache] $((free / 1024)) MB free still: removing the whole build cache" >&2
go clean -cache
echo "[trim-cache] $(($(free_kb) / 1024)) MB free" >&2
