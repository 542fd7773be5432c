#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Runs the metastable-failure benchmark (issue 43): every configuration in
# turn, 32 s each (5 s steady, a 2 s capacity drop, 25 s after it), against
# its own loopback server; 4 min 57 s with the nine configurations on 2
# cores.
#   bash benchmarks/metastable.sh          # full run: the table, and the plot in docs/
#   bash benchmarks/metastable.sh -after 90s -configs no-retry,failsafehttp-throttler
#                                          # longer after the trigger (≈ 3 min 20 s)
#   bash benchmarks/metastable.sh -smoke   # seconds, for CI (figures meaningless; no plot)
# Extra flags go to the command (see: go run ./metastable -h).
#
# Environment:
#   OUT=dir    where table.txt goes (default: a new temporary directory,
#              printed at the end)
#   PLOT=file  where the plot goes (default: docs/metastable.svg for the
#              full run without flags, OUT/metastable.svg with flags, none
#              for -smoke; PLOT= for none)
#
# The run is latency-sensitive (10 ms service, 200 ms attempt timeout): it
# asks for a higher CPU priority when it may, prints the load average at
# its start and end, and flags a configuration whose load generator fell
# behind (another process was using the cores).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
OUT=${OUT:-$(mktemp -d -t otelretry-metastable.XXXXXX)}
mkdir -p "$OUT"
# The committed plot is the full run's: a run with flags of its own (another
# scenario, or -smoke) plots into OUT instead, unless PLOT says otherwise.
plot=${PLOT-../docs/metastable.svg}
if [ "$#" -gt 0 ]; then
  plot=${PLOT-$OUT/metastable.svg}
fi
for a in "$@"; do
  case "$a" in -smoke | --smoke | -short | --short) plot=${PLOT-} ;; esac
done
args=()
[ -z "$plot" ] || args=(-plot "$plot")
bin="$OUT/metastable"
go build -o "$bin" ./metastable
nice=()
if [ "$(id -u)" = 0 ]; then
  nice=(nice -n -10)
fi
"${nice[@]}" "$bin" "${args[@]}" "$@" | tee "$OUT/table.txt"
rm -f "$bin"
echo "results in $OUT${plot:+, plot in $plot}" >&2
