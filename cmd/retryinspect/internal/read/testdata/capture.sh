#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Takes the real captures retryinspect's readers are tested on (see README.md
# beside this script): the demo's traffic (examples/demo) is sent over OTLP
# to a real OpenTelemetry Collector, whose traces pipeline exports both to a
# real Jaeger v2 and, through the Collector's file exporter, to a file.
# Then Jaeger's /api/v3 answers are saved as they come.
#
#   collector-demo.jsonl   the file exporter's output (OTLP JSON, one request per line)
#   jaeger-search.json     GET /api/v3/traces?query.service_name=...  (every trace of the run)
#   jaeger-trace.json      GET /api/v3/traces/{id}                    (the run's largest trace)
#   jaeger-ui-search.json  GET /api/traces?service=...                (the same search, as the Jaeger UI reads it)
#   jaeger-ui-trace.json   GET /api/traces/{id}                       (the same trace, as the Jaeger UI shows it)
#   jaeger-not-found.json  GET /api/v3/traces?query.service_name=<unknown>  (HTTP 404)
#
# Jaeger and the Collector are the binaries scripts/stack.sh builds from
# their Go modules into the cache (`scripts/stack.sh install`, run here
# first). They run here on ports of their own, outside stack.sh's, so that a
# stack already up is left alone. The stack's Collector has no file exporter
# (collector-config.yaml needs none), so this script builds a second one with
# the stack's ocb (tools/ocb), from the same manifest plus the contrib file
# exporter of its release, and
# runs it with collector-config.yaml and an overlay that adds the file
# exporter to the traces pipeline. Everything is stopped on exit.
#
# Usage: cmd/retryinspect/internal/read/testdata/capture.sh  (from anywhere)
# Environment: OTELRETRY_CACHE (default $HOME/.cache/otelretry), as stack.sh;
# CAPTURE_PORT_BASE (default 31400), the first of the 11 ports it listens on.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
cd "$root"

CACHE=${OTELRETRY_CACHE:-$HOME/.cache/otelretry}
CAPTURE_DIR=$CACHE/collector-capture
CAPTURE_BIN=$CAPTURE_DIR/otelcol-capture
FILE_EXPORTER="github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v0.161.0"

# Ports of their own: twelve from CAPTURE_PORT_BASE (default 31400), below
# the ephemeral range (32768 and up), where no client connection can hold
# them, and outside stack.sh's (14xxx-26xxx). Each must be free.
base=${CAPTURE_PORT_BASE:-31400}
port() { echo "127.0.0.1:$((base + $1))"; }
JAEGER_OTLP_GRPC=$(port 0)
JAEGER_OTLP_HTTP=$(port 1)
JAEGER_QUERY_HTTP=$(port 2)
JAEGER_QUERY_GRPC=$(port 3)
JAEGER_HEALTH=$(port 4)
JAEGER_TELEMETRY_PORT=$((base + 5))
CAP_OTLP_GRPC=$(port 6)
CAP_OTLP_HTTP=$(port 7)
CAP_PROM=$(port 8)
CAP_HEALTH=$(port 9)
CAP_TELEMETRY_PORT=$((base + 10))
for i in $(seq 0 10); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$((base + i))") 2>/dev/null; then
		echo "[capture] 127.0.0.1:$((base + i)) is in use: set CAPTURE_PORT_BASE to the first of 11 free ports" >&2
		exit 1
	fi
done

JAEGER=http://$JAEGER_QUERY_HTTP
SERVICE=retryinspect-capture-$(date +%s)
WORK=$(mktemp -d)
capture_pid=
jaeger_pid=

log() { printf '[capture] %s\n' "$*" >&2; }

finish() {
	local rc=$? pid
	for pid in $capture_pid $jaeger_pid; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
	exit "$rc"
}
trap finish EXIT

go_env() { env CGO_ENABLED=0 GOTOOLCHAIN=local GOCACHE="$CACHE/go-build" GOWORK=off "$@"; }

# 1. The capture Collector: the stack's manifest plus the file exporter.
if [ ! -x "$CAPTURE_BIN" ]; then
	log "building the capture Collector (once; a few minutes)"
	mkdir -p "$CAPTURE_DIR" "$CACHE/bin"
	(cd tools/ocb && go_env go build -trimpath -o "$CACHE/bin/ocb" go.opentelemetry.io/collector/cmd/builder)
	awk -v out="$CAPTURE_DIR" -v fe="$FILE_EXPORTER" '
		/^dist:/ { print; print "  output_path: " out; next }
		/^  name: / { print "  name: otelcol-capture"; next }
		/^  module: / { print "  module: github.com/otelretry/otelretry-go/otelcol-capture"; next }
		{ print }
		/^exporters:/ { print "  - gomod: " fe }' deploy/collector/manifest.yaml >"$CACHE/manifest-capture.yaml"
	# ocb writes the module (its go.mod by its own `go mod tidy`; with
	# --skip-get-modules it writes none) and the build needs only what the
	# binary imports.
	{ go_env "$CACHE/bin/ocb" --config "$CACHE/manifest-capture.yaml" --skip-compilation &&
		(cd "$CAPTURE_DIR" && go_env GOFLAGS=-mod=mod go build -trimpath -ldflags='-s -w' -o "$CAPTURE_BIN" .); } \
		>"$CACHE/build-capture.log" 2>&1 || { tail -n 40 "$CACHE/build-capture.log" >&2; exit 1; }
fi

# 2. Jaeger, as stack.sh runs it, on the private ports.
scripts/stack.sh install
log "starting Jaeger"
JAEGER_OTLP_GRPC_ENDPOINT=$JAEGER_OTLP_GRPC JAEGER_OTLP_HTTP_ENDPOINT=$JAEGER_OTLP_HTTP \
	JAEGER_QUERY_HTTP_ENDPOINT=$JAEGER_QUERY_HTTP JAEGER_QUERY_GRPC_ENDPOINT=$JAEGER_QUERY_GRPC \
	JAEGER_HEALTH_ENDPOINT=$JAEGER_HEALTH JAEGER_TELEMETRY_HOST=127.0.0.1 JAEGER_TELEMETRY_PORT=$JAEGER_TELEMETRY_PORT \
	"$CACHE/bin/jaeger" --config "$root/deploy/jaeger/config.yaml" >"$WORK/jaeger.log" 2>&1 &
jaeger_pid=$!
wait_ready() { # NAME PID URL
	for _ in $(seq 150); do
		curl -fsS -o /dev/null --max-time 1 "$3" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.2
	done
	log "$1 not ready:"
	tail -n 30 "$WORK/$1.log" >&2
	exit 1
}
wait_ready jaeger "$jaeger_pid" "$JAEGER/api/v3/services"

# 3. The capture Collector, exporting traces to Jaeger and to a file.
cat >"$WORK/overlay.yaml" <<EOF
exporters:
  file/capture:
    path: $WORK/collector.jsonl
    format: json
    flush_interval: 100ms
service:
  pipelines:
    traces:
      exporters: [otlp_grpc/jaeger, file/capture]
EOF
log "starting the capture Collector"
OTELCOL_OTLP_GRPC_ENDPOINT=$CAP_OTLP_GRPC OTELCOL_OTLP_HTTP_ENDPOINT=$CAP_OTLP_HTTP \
	OTELCOL_JAEGER_ENDPOINT=$JAEGER_OTLP_GRPC OTELCOL_PROMETHEUS_ENDPOINT=$CAP_PROM \
	OTELCOL_HEALTH_ENDPOINT=$CAP_HEALTH OTELCOL_TELEMETRY_HOST=127.0.0.1 OTELCOL_TELEMETRY_PORT=$CAP_TELEMETRY_PORT \
	"$CAPTURE_BIN" --config "$root/collector-config.yaml" --config "$WORK/overlay.yaml" >"$WORK/collector.log" 2>&1 &
capture_pid=$!
wait_ready collector "$capture_pid" "http://$CAP_HEALTH/"

# 4. The demo's traffic, through the capture Collector.
log "running the demo as service $SERVICE"
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
(cd examples/demo && env GOWORK=off OTEL_SERVICE_NAME="$SERVICE" \
	OTEL_EXPORTER_OTLP_ENDPOINT="http://$CAP_OTLP_HTTP" OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
	go run . >"$WORK/demo.out" 2>&1) || { tail -n 40 "$WORK/demo.out" >&2; exit 1; }

# 5. Wait until Jaeger holds every span the file holds, twice in a row.
file_spans() { jq -s '[.[].resourceSpans[].scopeSpans[].spans[]] | length' "$WORK/collector.jsonl" 2>/dev/null || echo 0; }
search() { # SERVICE [curl options]
	local service=$1
	shift
	curl -sS --max-time 10 "$@" -G "$JAEGER/api/v3/traces" \
		--data-urlencode "query.service_name=$service" \
		--data-urlencode "query.start_time_min=$start" \
		--data-urlencode "query.start_time_max=$(date -u -d '+1 min' +%Y-%m-%dT%H:%M:%SZ)" \
		--data-urlencode "query.num_traces=10000"
}
stable=0
for _ in $(seq 150); do
	want=$(file_spans)
	got=$(search "$SERVICE" -f 2>/dev/null | jq '[.result.resourceSpans[].scopeSpans[].spans[]] | length' 2>/dev/null || echo 0)
	if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
		stable=$((stable + 1))
		[ "$stable" -ge 2 ] && break
	else
		stable=0
	fi
	sleep 0.4
done
[ "$stable" -ge 2 ] || { log "Jaeger has $got spans, the file $want"; exit 1; }
log "$want spans in Jaeger and in the file"

# 6. Save the answers, then stop the Collector so that the file is complete.
search "$SERVICE" -f >"$here/jaeger-search.json"
largest=$(jq -r '[.result.resourceSpans[].scopeSpans[].spans[]] | group_by(.traceId) | max_by(length) | .[0].traceId' "$here/jaeger-search.json")
curl -fsS --max-time 10 "$JAEGER/api/v3/traces/$largest" >"$here/jaeger-trace.json"
# The same as the Jaeger UI reads them, through its own API, /api/traces:
# the search (times in microseconds), and the trace ("Trace JSON").
curl -fsS --max-time 10 -G "$JAEGER/api/traces" --data-urlencode "service=$SERVICE" \
	--data-urlencode "start=$(($(date -u -d "$start" +%s) * 1000000))" \
	--data-urlencode "end=$((($(date -u +%s) + 60) * 1000000))" --data-urlencode "limit=10000" >"$here/jaeger-ui-search.json"
curl -fsS --max-time 10 "$JAEGER/api/traces/$largest" >"$here/jaeger-ui-trace.json"
status=$(search retryinspect-capture-no-such-service -o "$here/jaeger-not-found.json" -w '%{http_code}')
[ "$status" = 404 ] || { log "a search that matches nothing answered HTTP $status, not 404"; exit 1; }
kill -TERM "$capture_pid"
wait "$capture_pid" 2>/dev/null || true
capture_pid=
cp "$WORK/collector.jsonl" "$here/collector-demo.jsonl"

cat >"$here/capture.env" <<EOF
# Written by capture.sh: what the captures in this directory were taken with.
captured_at=$start
service=$SERVICE
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- otelretry attrs examples/demo || echo " with uncommitted changes to otelretry, attrs or examples/demo")
jaeger=$(grep -o 'jaegertracing/jaeger v[^ ]*' tools/jaeger/go.mod | head -n1) (built by scripts/stack.sh from tools/jaeger)
collector=$("$CAPTURE_BIN" --version 2>/dev/null | head -n1)
file_exporter=$FILE_EXPORTER
spans=$want
traces=$(jq '[.result.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$here/jaeger-search.json")
largest_trace=$largest
EOF
log "wrote collector-demo.jsonl, jaeger-search.json, jaeger-trace.json, jaeger-ui-search.json, jaeger-ui-trace.json, jaeger-not-found.json and capture.env in $here"
