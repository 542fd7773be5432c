#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the overhead benchmarks (package ./overhead) side by side with the
# peers, then prints benchstat's tables (one per benchmark and unit, one row
# per case), the ratios of otelretry-noop and otelretry-sdk to every peer
# and the overhead targets (cmd/ratios: ratios of the medians, and the
# targets judged on the median of the per-run ratios).
#
#   cd benchmarks && ./compare.sh
#
# Environment:
#   COUNT=6          runs of each benchmark (benchstat wants >= 6)
#   BENCHTIME=200ms  go test -benchtime per run (e.g. 20000x)
#   BENCH=.          go test -bench pattern (e.g. 'RoundTrip$')
#   OUT=dir          where raw.txt, benchstat.txt and ratios.txt go
#                    (default: a new temporary directory)
#
# The runs are interleaved: the test binary is built once and run COUNT
# times with -count 1, so a slow spell of the machine hits every case alike
# instead of all the runs of one case. No timing is asserted.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-200ms}
BENCH=${BENCH:-.}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/otelretry-bench.XXXXXX")}
mkdir -p "$OUT"

go test -c -o "$OUT/overhead.test" ./overhead
: >"$OUT/raw.txt"
for i in $(seq 1 "$COUNT"); do
	echo "run $i/$COUNT" >&2
	"$OUT/overhead.test" -test.run '^$' -test.bench "$BENCH" -test.benchmem \
		-test.count 1 -test.benchtime "$BENCHTIME" >>"$OUT/raw.txt"
done

echo
echo "# go test ./overhead -bench '$BENCH' -benchmem -benchtime $BENCHTIME, $COUNT interleaved runs ($(go env GOVERSION), GOMAXPROCS=${GOMAXPROCS:-$(nproc)})"
# One table per benchmark and unit, one row per case (or, for
# BenchmarkSDKParts, per part): median ± 95% CI.
go tool benchstat -table .name -row /case,/part "overhead=$OUT/raw.txt" | tee "$OUT/benchstat.txt"
go run ./cmd/ratios "$OUT/raw.txt" | tee "$OUT/ratios.txt"
echo
echo "results in $OUT" >&2
