#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# End-to-end test against real programs on 127.0.0.1: installs (cached) and
# starts the stack (scripts/stack.sh: Jaeger, Prometheus, the Collector, and
# the tiered agent and samplers), runs the tests in ./internal/e2e with its
# endpoints, and always stops the stack again. Prints the elapsed time of
# each phase.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
start=$SECONDS

finish() {
	local rc=$?
	scripts/stack.sh down
	echo "[e2e] $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s (install + up + tests + down)"
	exit "$rc"
}
trap finish EXIT

phase=$SECONDS
scripts/stack.sh install
echo "[e2e] install: $((SECONDS - phase))s"
phase=$SECONDS
scripts/stack.sh up
echo "[e2e] up: $((SECONDS - phase))s"
phase=$SECONDS

# shellcheck disable=SC1090
source "$(scripts/stack.sh env)"
# internal/e2e: the demo through the Collector, and the traffic generator
# through the tiered agent and samplers, into Jaeger and Prometheus;
# cmd/retryinspect: its reader against the real Jaeger API (TestRealJaeger
# runs when the stack's endpoints are set, as they are here);
# internal/realclients: the Prometheus API client and the OTLP exporter
# through otelretry into the real Prometheus and Collector.
# Each is a module of its own.
if ! (export OTELRETRY_E2E=1 GOWORK=off
	(cd internal/e2e && go test ./... -count=1 -v -timeout 10m) &&
		(cd cmd/retryinspect && go test . -run 'Jaeger' -count=1 -v -timeout 5m) &&
		(cd internal/realclients && go test . -run 'Prometheus|OTLP' -count=1 -v -timeout 5m)); then
	echo "[e2e] tests failed; last lines of the stack's logs ($OTELRETRY_STACK_LOGS):" >&2
	for f in "$OTELRETRY_STACK_LOGS"/*.log; do
		echo "--- $f" >&2
		tail -n 20 "$f" >&2 || true
	done
	exit 1
fi
echo "[e2e] tests: $((SECONDS - phase))s"
