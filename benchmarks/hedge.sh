#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the hedging benchmark (issue 36): every configuration in turn,
# in interleaved repetitions, against a loopback server whose service time
# has a long tail, then in a brownout; about 4 min with its five
# configurations (16 s per configuration and repetition).
#   bash benchmarks/hedge.sh            # full run: the medians of 3 repetitions
#   bash benchmarks/hedge.sh -reps 5    # more repetitions
#   bash benchmarks/hedge.sh -smoke     # a few seconds, for CI (figures meaningless)
#   bash benchmarks/hedge.sh -sweep     # the sweep (issue 44): p99.9 against extra
#                                       # requests, failsafe-go and otelretry at 6 fixed
#                                       # delays, otelretry at 4 quantiles, and the plot
#                                       # in docs/ (5 repetitions, about 16 min per 3)
# Extra flags go to the command (see: go run ./hedge -h).
#
# Environment:
#   OUT=dir    where table.txt and hedge.json go (default: a new temporary
#              directory, printed at the end)
#   PLOT=file  where the sweep's plot goes (default: docs/hedge-sweep.svg
#              with -sweep, none without; PLOT= for none)
#
# The run is latency-sensitive (service times of a few milliseconds): it
# asks for a higher CPU priority when it may, prints the load average at
# its start and end, and flags a turn whose load generator fell behind
# (another process was using the cores).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
OUT=${OUT:-$(mktemp -d -t otelretry-hedge.XXXXXX)}
mkdir -p "$OUT"
plot=
for a in "$@"; do
  case "$a" in -sweep | --sweep) plot=${PLOT-../docs/hedge-sweep.svg} ;; esac
done
for a in "$@"; do
  case "$a" in -smoke | --smoke | -short | --short) plot=${PLOT-} ;; esac
done
args=()
[ -z "$plot" ] || args=(-plot "$plot")
bin="$OUT/hedge"
go build -o "$bin" ./hedge
nice=()
if [ "$(id -u)" = 0 ]; then
  nice=(nice -n -10)
fi
"${nice[@]}" "$bin" -json "$OUT/hedge.json" "${args[@]}" "$@" | tee "$OUT/table.txt"
rm -f "$bin"
echo "results in $OUT${plot:+, plot in $plot}" >&2
