#!/usr/bin/env bash
# Validates docker-compose.yaml with `docker-compose config` (Debian's
# docker-compose package, installed if missing) and checks that every file it
# mounts exists and every image is pinned. No container engine is needed and
# no container is started.
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v docker-compose >/dev/null 2>&1; then
	echo "[compose] installing Debian's docker-compose" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT

docker-compose -f docker-compose.yaml config >"$out"

status=0
# Bind mounts: every source must exist in the repo.
while read -r src; do
	if [ ! -e "$src" ]; then
		echo "[compose] mounted path does not exist: $src" >&2
		status=1
	fi
done < <(awk '/^ *- \// { sub(/^ *- /, ""); split($0, a, ":"); print a[1] } /^ *source: \// { print $2 }' "$out")

# Images: pinned to a version, never latest.
while read -r image; do
	if [[ $image != *:* || $image == *:latest ]]; then
		echo "[compose] image not pinned: $image" >&2
		status=1
	fi
done < <(awk '$1 == "image:" { print $2 }' "$out")

# The Prometheus config it mounts, when promtool is at hand (stack.sh install
# brings it with Debian's prometheus package).
if command -v promtool >/dev/null 2>&1; then
	promtool check config deploy/prometheus/prometheus.compose.yml >/dev/null || status=1
fi

services=$(docker-compose -f docker-compose.yaml config --services | sort | tr '\n' ' ')
if [ "$status" -eq 0 ]; then
	echo "[compose] docker-compose.yaml is valid; services: $services"
fi
exit "$status"
