#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Makes room for a run's builds when Go's build cache has filled the disk:
# go trims only the entries unused for five days, so a machine that runs
# many builds a day fills its disk, and every build then fails with "no
# space left on device". With less than OTELRETRY_MIN_FREE_GB (default 20)
# free where the cache lives, it removes the build entries unused for a
# day, then those unused for three hours (go marks an entry it uses at
# most once an hour, so a build going on keeps its own; the entries are
# the XX/<hash>-a and -d files, and nothing else of the cache is touched:
# not the fuzzing corpus, nor testexpire.txt, which go clean -testcache
# writes), then, still short of room, the whole cache (`go clean -cache`,
# which keeps the fuzzing corpus too). scripts/test.sh runs it first.
set -euo pipefail

min_gb=${OTELRETRY_MIN_FREE_GB:-20}
# At most nine digits, so that it stays a number in bash's arithmetic once
# in KiB (a larger one wrapped round and trimmed nothing).
if ! [[ $min_gb =~ ^[0-9]{1,9}$ ]]; then
	echo "trim-cache: OTELRETRY_MIN_FREE_GB=$min_gb: want a whole number of gigabytes, at most 999999999" >&2
	exit 2
fi
min_kb=$((10#$min_gb * 1024 * 1024))
cache=$(go env GOCACHE)
[ -d "$cache" ] || exit 0 # off, or not made yet
cache=$(readlink -f "$cache") # a link to it trims what it points at

# free_kb prints the free space where the cache lives, in KiB, or nothing
# when df's answer is not a number.
free_kb() {
	local kb
	kb=$(df -Pk "$cache" | awk 'NR == 2 { print $4 }')
	[[ $kb =~ ^[0-9]+$ ]] && echo "$kb"
	return 0
}

free=$(free_kb)
if [ -z "$free" ]; then
	echo "[trim-cache] df gives no free space for $cache: nothing trimmed" >&2
	exit 0
fi
[ "$free" -lt "$min_kb" ] || exit 0
for unused in "a day:1440" "three hours:180"; do
	echo "[trim-cache] $((free / 1024)) MB free: removing the build cache's entries unused for ${unused%:*} ($cache)" >&2
	(cd "$cache" && find . -mindepth 2 -maxdepth 2 -type f -regex '\./[0-9a-f][0-9a-f]/[0-9a-f]+-[ad]' -mmin +"${unused#*:}" -delete)
	free=$(free_kb)
	[ -n "$free" ] && [ "$free" -lt "$min_kb" ] || exit 0
done
echo "[trim-cache] $((free / 1024)) MB free still: removing the whole build cache" >&2
go clean -cache
free=$(free_kb)
[ -z "$free" ] || echo "[trim-cache] $((free / 1024)) MB free" >&2
