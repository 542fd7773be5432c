#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Counts the instructions per operation of the overhead benchmarks' cases
# (package ./overhead) with valgrind's cachegrind: each case is run for N
# and for 2N operations, and the difference, divided by N, is printed. One
# thread (GOMAXPROCS=1), no collector (GOGC=off: its share is left out),
# no asynchronous preemption (its signals) and no RDTSCP (cpu.rdtscp=off:
# valgrind 3.19 cannot run it, and the runtime reads the cycle counter
# with it when a lock is contended, so a run died of SIGILL now and then).
# A run that fails or counts nothing stops the script with valgrind's
# output. Counts do not depend on the machine's load, except for the
# scheduler's preemption of a goroutine that ran 10 ms, whose share grows
# with valgrind's slowness: about ±200 instructions per operation in
# memory, ±1 000 on loopback.
#
#   cd benchmarks && ./instructions.sh
#
# Environment:
#   CASES='...'  an extended regular expression the lines of the case
#                list below must match (default: every case)
#   BIN=file     a test binary of ./overhead built already (default: built
#                now, with go test -c)
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is required" >&2; exit 1; }

if [ -z "${BIN:-}" ]; then
	BIN=$(mktemp "${TMPDIR:-/tmp}/otelretry-overhead.XXXXXX")
	trap 'rm -f "$BIN"' EXIT
	go test -c -o "$BIN" ./overhead
fi

count() { # bench n: the instructions of n operations, and of the setup
	local out rc=0
	out=$(GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 GOGC=off \
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$BIN" -test.run '^$' -test.bench "$1" -test.benchtime="${2}x" -test.count=1 </dev/null 2>&1) || rc=$?
	local refs
	refs=$(awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' <<<"$out")
	if [ "$rc" -ne 0 ] || [ -z "$refs" ]; then
		printf 'instructions.sh: %s with %s operations: valgrind exited %d, counted %s\n%s\n' "$1" "$2" "$rc" "${refs:-nothing}" "$out" >&2
		return 1
	fi
	echo "$refs"
}

# Each case with its N: enough operations that the setup's share cancels
# out and a loopback case stays within a minute under valgrind.
grep -E "${CASES:-.}" <<'LIST' | while read -r bench n; do
RoundTrip$/case=bare$ 8000
RoundTrip$/case=retryablehttp$ 8000
RoundTrip$/case=otelretry-noop$ 8000
RoundTrip$/case=retryablehttp-deadline$ 8000
RoundTrip$/case=retryablehttp-otelhttp-content$ 8000
RoundTrip$/case=otelretry-sdk$ 8000
Retry3$/case=otelretry-noop$ 4000
Retry3$/case=otelretry-sdk$ 4000
RoundTripLoopback$/case=retryablehttp$ 2000
RoundTripLoopback$/case=otelretry-noop$ 2000
RoundTripLoopback$/case=retryablehttp-otelhttp-content$ 2000
RoundTripLoopback$/case=otelretry-sdk$ 2000
LIST
	one=$(count "$bench" "$n")
	two=$(count "$bench" $((2 * n)))
	printf '%-52s %8d\n' "$bench" $(((two - one) / n))
done
