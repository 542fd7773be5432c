#!/usr/bin/env bash
# Local observability stack for the otelretry end-to-end test:
# OpenTelemetry Collector (built with ocb from deploy/collector/manifest.yaml),
# Jaeger v2 (built from tools/jaeger) and Prometheus (Debian package), all on
# 127.0.0.1 with explicit ports.
#
# Usage: scripts/stack.sh install|up|down|status|env
#   install  apt-get install prometheus (if missing); build ocb, the Collector
#            and Jaeger into the cache (skipped when inputs are unchanged)
#   up       start the three programs, wait until they are ready, write the
#            env file (scripts/stack.sh env prints its path)
#   down     stop whatever `up` started (always exits 0; safe in a trap)
#   status   show pids and readiness
#   env      print the path of the env file written by `up`
#
# Environment:
#   OTELRETRY_CACHE      build cache (default $HOME/.cache/otelretry)
#   OTELRETRY_RUN_DIR    pids, logs, env file, Prometheus data (default $OTELRETRY_CACHE/run)
#   OTELRETRY_STACK_TTL  seconds after which a watchdog stops the stack (default 1800)
#   OTELRETRY_UP_TIMEOUT seconds to wait for readiness (default 60)
#   OTELRETRY_COLLECTOR_OTLP_HTTP, OTELRETRY_JAEGER_QUERY_HTTP, OTELRETRY_PROMETHEUS_HTTP, ...
#                        listening addresses (defaults below, all on 127.0.0.1)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

CACHE=${OTELRETRY_CACHE:-$HOME/.cache/otelretry}
RUN=${OTELRETRY_RUN_DIR:-$CACHE/run}
BIN=$CACHE/bin
STAMPS=$CACHE/stamps
COLLECTOR_DIR=$CACHE/collector
COLLECTOR_BIN=$COLLECTOR_DIR/otelcol-otelretry
JAEGER_BIN=$BIN/jaeger
OCB_BIN=$BIN/ocb
PROMETHEUS_BIN=${OTELRETRY_PROMETHEUS_BIN:-/usr/bin/prometheus}
ENV_FILE=$RUN/stack.env
TTL=${OTELRETRY_STACK_TTL:-1800}
UP_TIMEOUT=${OTELRETRY_UP_TIMEOUT:-60}

# Every listening address, all on loopback. None uses a default port, so the
# stack can run next to a docker-compose setup or another Collector.
COLLECTOR_OTLP_GRPC=${OTELRETRY_COLLECTOR_OTLP_GRPC:-127.0.0.1:14317}
COLLECTOR_OTLP_HTTP=${OTELRETRY_COLLECTOR_OTLP_HTTP:-127.0.0.1:14318}
COLLECTOR_PROM=${OTELRETRY_COLLECTOR_PROM:-127.0.0.1:18889}
COLLECTOR_HEALTH=${OTELRETRY_COLLECTOR_HEALTH:-127.0.0.1:14133}
COLLECTOR_TELEMETRY_PORT=${OTELRETRY_COLLECTOR_TELEMETRY_PORT:-14888}
JAEGER_OTLP_GRPC=${OTELRETRY_JAEGER_OTLP_GRPC:-127.0.0.1:24317}
JAEGER_OTLP_HTTP=${OTELRETRY_JAEGER_OTLP_HTTP:-127.0.0.1:24318}
JAEGER_QUERY_HTTP=${OTELRETRY_JAEGER_QUERY_HTTP:-127.0.0.1:26686}
JAEGER_QUERY_GRPC=${OTELRETRY_JAEGER_QUERY_GRPC:-127.0.0.1:26685}
JAEGER_HEALTH=${OTELRETRY_JAEGER_HEALTH:-127.0.0.1:24133}
JAEGER_TELEMETRY_PORT=${OTELRETRY_JAEGER_TELEMETRY_PORT:-24888}
PROMETHEUS_HTTP=${OTELRETRY_PROMETHEUS_HTTP:-127.0.0.1:19090}

SERVICES=(jaeger collector prometheus)

log() { printf '[stack] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Tool builds: no cgo, no toolchain download, build cache outside the repo.
go_env() {
	env CGO_ENABLED=0 GOTOOLCHAIN=local GOCACHE="$CACHE/go-build" GOWORK=off "$@"
}

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

# ---------------------------------------------------------------- install

install_prometheus() {
	if [ -x "$PROMETHEUS_BIN" ]; then
		log "prometheus: $("$PROMETHEUS_BIN" --version 2>&1 | head -n1)"
		return
	fi
	log "prometheus: installing Debian package"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
	[ -x "$PROMETHEUS_BIN" ] || die "prometheus not found at $PROMETHEUS_BIN after install"
	log "prometheus: $("$PROMETHEUS_BIN" --version 2>&1 | head -n1)"
}

install_curl() {
	command -v curl >/dev/null 2>&1 && return
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl ca-certificates >/dev/null
}

# build NAME HASH OUTPUT CMD...: runs CMD unless OUTPUT exists and the stamp matches HASH.
build() {
	local name=$1 hash=$2 out=$3
	shift 3
	if [ -x "$out" ] && [ "$(cat "$STAMPS/$name" 2>/dev/null)" = "$hash" ]; then
		log "$name: cached ($out)"
		return
	fi
	log "$name: building"
	local start=$SECONDS
	rm -f "$STAMPS/$name"
	"$@" >"$CACHE/build-$name.log" 2>&1 || {
		tail -n 40 "$CACHE/build-$name.log" >&2
		die "$name: build failed (log: $CACHE/build-$name.log)"
	}
	[ -x "$out" ] || die "$name: build produced no $out"
	echo "$hash" >"$STAMPS/$name"
	log "$name: built in $((SECONDS - start))s"
}

build_ocb() {
	(cd "$ROOT/tools/ocb" && go_env go build -trimpath -o "$OCB_BIN" go.opentelemetry.io/collector/cmd/builder)
}

build_collector() {
	# The committed manifest has no output path; inject the cache dir.
	mkdir -p "$COLLECTOR_DIR"
	awk -v out="$COLLECTOR_DIR" '{ print } /^dist:/ { print "  output_path: " out }' \
		"$ROOT/deploy/collector/manifest.yaml" >"$CACHE/manifest.yaml"
	go_env "$OCB_BIN" --config "$CACHE/manifest.yaml"
}

build_jaeger() {
	(cd "$ROOT/tools/jaeger" && go_env go build -trimpath -ldflags='-s -w' -o "$JAEGER_BIN" github.com/jaegertracing/jaeger/cmd/jaeger)
}

# Component types a config uses: the keys under receivers/processors/exporters/
# extensions, without the /name suffix.
config_components() {
	awk '
		/^[a-z_]+:/ { section = $1; sub(":", "", section); next }
		section ~ /^(receivers|processors|exporters|extensions)$/ && /^  [a-z0-9_]+(\/[^:]*)?:/ {
			name = $1; sub(":.*", "", name); sub("/.*", "", name); print section "/" name
		}' "$1" | sort -u
}

# Component types compiled into the Collector binary (`components` subcommand).
binary_components() {
	"$COLLECTOR_BIN" components 2>/dev/null | awk '
		/^[a-z]+:/ { section = $1; sub(":", "", section); next }
		section ~ /^(receivers|processors|exporters|extensions)$/ && /^ *- name:/ { print section "/" $3 }' | sort -u
}

check_configs() {
	local want have
	want=$(config_components "$ROOT/collector-config.yaml")
	have=$(binary_components)
	if [ "$want" != "$have" ]; then
		log "collector-config.yaml uses:"
		printf '  %s\n' "$want" >&2
		log "the Collector built from deploy/collector/manifest.yaml has:"
		printf '  %s\n' "$have" >&2
		die "manifest and collector-config.yaml disagree"
	fi
	"$COLLECTOR_BIN" validate --config "$ROOT/collector-config.yaml" >/dev/null 2>"$CACHE/validate.log" ||
		{ cat "$CACHE/validate.log" >&2; die "collector-config.yaml does not validate"; }
	"$JAEGER_BIN" validate --config "$ROOT/deploy/jaeger/config.yaml" >/dev/null 2>"$CACHE/validate.log" ||
		{ cat "$CACHE/validate.log" >&2; die "deploy/jaeger/config.yaml does not validate"; }
	local promtool
	promtool=$(dirname "$PROMETHEUS_BIN")/promtool
	if [ -x "$promtool" ]; then
		"$promtool" check config "$ROOT/deploy/prometheus/prometheus.yml" >/dev/null 2>"$CACHE/validate.log" ||
			{ cat "$CACHE/validate.log" >&2; die "deploy/prometheus/prometheus.yml does not validate"; }
	fi
	log "collector: components match collector-config.yaml ($(echo "$want" | wc -l)); configs validate"
}

cmd_install() {
	local start=$SECONDS gov
	mkdir -p "$BIN" "$STAMPS"
	install_curl
	install_prometheus
	gov=$(go env GOVERSION)
	build ocb "$(hash_of "$ROOT/tools/ocb/go.mod" "$ROOT/tools/ocb/go.sum"; echo "$gov")" "$OCB_BIN" build_ocb
	build collector "$(hash_of "$ROOT/deploy/collector/manifest.yaml" "$STAMPS/ocb")" "$COLLECTOR_BIN" build_collector
	build jaeger "$(hash_of "$ROOT/tools/jaeger/go.mod" "$ROOT/tools/jaeger/go.sum"; echo "$gov")" "$JAEGER_BIN" build_jaeger
	check_configs
	log "install done in $((SECONDS - start))s"
}

# ---------------------------------------------------------------- up/down

pid_of() { cat "$RUN/$1.pid" 2>/dev/null || true; }

# alive NAME: the recorded pid runs and is still the program we started.
alive() {
	local pid
	pid=$(pid_of "$1")
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && grep -qa -- "$(expected_cmd "$1")" "/proc/$pid/cmdline"
}

expected_cmd() {
	case $1 in
	jaeger) echo "$JAEGER_BIN" ;;
	collector) echo "$COLLECTOR_BIN" ;;
	prometheus) echo "$PROMETHEUS_BIN" ;;
	watchdog) echo "stack-watchdog" ;;
	esac
}

port_in_use() {
	local hostport=$1
	(exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; }

start() {
	local name=$1
	shift
	log "starting $name"
	"$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/$name.pid"
}

# wait_for NAME DEADLINE URL [GREP]: poll URL until it answers 2xx (and its body
# matches GREP), the process dies, or the deadline (epoch seconds) passes.
wait_for() {
	local name=$1 deadline=$2 url=$3 pattern=${4:-}
	while :; do
		if ! alive "$name"; then
			tail -n 30 "$RUN/logs/$name.log" >&2 || true
			die "$name exited during startup (log: $RUN/logs/$name.log)"
		fi
		if [ -z "$pattern" ]; then
			http_ok "$url" && return 0
		elif curl -fsS --max-time 2 "$url" 2>/dev/null | grep -q "$pattern"; then
			return 0
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			tail -n 30 "$RUN/logs/$name.log" >&2 || true
			die "$name not ready within ${UP_TIMEOUT}s ($url)"
		fi
		sleep 0.2
	done
}

cmd_up() {
	local start_ms deadline hp name
	start_ms=$(date +%s%N)
	if [ ! -x "$COLLECTOR_BIN" ] || [ ! -x "$JAEGER_BIN" ] || [ ! -x "$PROMETHEUS_BIN" ]; then
		die "binaries missing: run scripts/stack.sh install first"
	fi
	command -v curl >/dev/null 2>&1 || die "curl missing: run scripts/stack.sh install first"
	cmd_down quiet
	for hp in "$COLLECTOR_OTLP_GRPC" "$COLLECTOR_OTLP_HTTP" "$COLLECTOR_PROM" "$COLLECTOR_HEALTH" \
		"127.0.0.1:$COLLECTOR_TELEMETRY_PORT" "$JAEGER_OTLP_GRPC" "$JAEGER_OTLP_HTTP" "$JAEGER_QUERY_HTTP" \
		"$JAEGER_QUERY_GRPC" "$JAEGER_HEALTH" "127.0.0.1:$JAEGER_TELEMETRY_PORT" "$PROMETHEUS_HTTP"; do
		port_in_use "$hp" && die "$hp is already in use"
	done
	rm -rf "$RUN/logs" "$RUN/prometheus-data" "$ENV_FILE"
	mkdir -p "$RUN/logs" "$RUN/prometheus-data"
	sed "s|127.0.0.1:18889|$COLLECTOR_PROM|" "$ROOT/deploy/prometheus/prometheus.yml" >"$RUN/prometheus.yml"

	# On any failure below, stop what was started.
	trap 'cmd_down quiet' EXIT

	start jaeger env \
		JAEGER_OTLP_GRPC_ENDPOINT="$JAEGER_OTLP_GRPC" JAEGER_OTLP_HTTP_ENDPOINT="$JAEGER_OTLP_HTTP" \
		JAEGER_QUERY_HTTP_ENDPOINT="$JAEGER_QUERY_HTTP" JAEGER_QUERY_GRPC_ENDPOINT="$JAEGER_QUERY_GRPC" \
		JAEGER_HEALTH_ENDPOINT="$JAEGER_HEALTH" \
		JAEGER_TELEMETRY_HOST=127.0.0.1 JAEGER_TELEMETRY_PORT="$JAEGER_TELEMETRY_PORT" \
		"$JAEGER_BIN" --config "$ROOT/deploy/jaeger/config.yaml"
	start collector env \
		OTELCOL_OTLP_GRPC_ENDPOINT="$COLLECTOR_OTLP_GRPC" OTELCOL_OTLP_HTTP_ENDPOINT="$COLLECTOR_OTLP_HTTP" \
		OTELCOL_JAEGER_ENDPOINT="$JAEGER_OTLP_GRPC" OTELCOL_PROMETHEUS_ENDPOINT="$COLLECTOR_PROM" \
		OTELCOL_HEALTH_ENDPOINT="$COLLECTOR_HEALTH" \
		OTELCOL_TELEMETRY_HOST=127.0.0.1 OTELCOL_TELEMETRY_PORT="$COLLECTOR_TELEMETRY_PORT" \
		"$COLLECTOR_BIN" --config "$ROOT/collector-config.yaml"
	start prometheus "$PROMETHEUS_BIN" \
		--config.file="$RUN/prometheus.yml" \
		--web.listen-address="$PROMETHEUS_HTTP" \
		--storage.tsdb.path="$RUN/prometheus-data" \
		--storage.tsdb.retention.time=2h

	# Watchdog: stops the stack by itself after $TTL seconds if nobody does.
	(
		exec -a stack-watchdog bash -c '
			trap "kill \$sp 2>/dev/null; exit 0" TERM
			sleep "$1" & sp=$!
			wait $sp
			OTELRETRY_WATCHDOG=1 "$2" down' stack-watchdog "$TTL" "$ROOT/scripts/stack.sh"
	) >"$RUN/logs/watchdog.log" 2>&1 </dev/null &
	echo $! >"$RUN/watchdog.pid"

	deadline=$(($(date +%s) + UP_TIMEOUT))
	wait_for jaeger "$deadline" "http://$JAEGER_HEALTH/status"
	wait_for jaeger "$deadline" "http://$JAEGER_QUERY_HTTP/api/services"
	wait_for collector "$deadline" "http://$COLLECTOR_HEALTH/"
	wait_for prometheus "$deadline" "http://$PROMETHEUS_HTTP/-/ready"
	# The first scrape comes a few seconds after Prometheus is ready.
	wait_for prometheus "$deadline" \
		"http://$PROMETHEUS_HTTP/api/v1/query?query=up%7Bjob%3D%22otel-collector%22%7D%3D%3D1" '"value"'
	trap - EXIT

	cat >"$ENV_FILE" <<EOF
# Written by scripts/stack.sh up; source it before the e2e test.
export OTELRETRY_OTLP_ENDPOINT=http://$COLLECTOR_OTLP_HTTP
export OTELRETRY_OTLP_GRPC_ENDPOINT=http://$COLLECTOR_OTLP_GRPC
export OTELRETRY_JAEGER_URL=http://$JAEGER_QUERY_HTTP
export OTELRETRY_PROMETHEUS_URL=http://$PROMETHEUS_HTTP
export OTELRETRY_COLLECTOR_METRICS_URL=http://$COLLECTOR_PROM/metrics
export OTELRETRY_STACK_LOGS=$RUN/logs
EOF
	for name in "${SERVICES[@]}"; do log "$name: pid $(pid_of "$name")"; done
	log "up in $((($(date +%s%N) - start_ms) / 1000000)) ms; env file: $ENV_FILE; logs: $RUN/logs"
}

# stop NAME: TERM, wait up to 10 s, then KILL. Only the pid we recorded.
stop() {
	local name=$1 pid i
	pid=$(pid_of "$name")
	if alive "$name"; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			alive "$name" || break
			sleep 0.2
		done
		if alive "$name"; then
			log "$name: still running after 10s, killing"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		[ "${2:-}" = quiet ] || log "$name: stopped (pid $pid)"
	fi
	rm -f "$RUN/$name.pid"
}

cmd_down() {
	local name
	[ -d "$RUN" ] || return 0
	for name in prometheus collector jaeger; do
		stop "$name" "${1:-}" || true
	done
	if [ -z "${OTELRETRY_WATCHDOG:-}" ]; then
		stop watchdog quiet || true
	else
		rm -f "$RUN/watchdog.pid"
	fi
	rm -f "$ENV_FILE"
	return 0
}

cmd_status() {
	local name url
	for name in "${SERVICES[@]}"; do
		case $name in
		jaeger) url="http://$JAEGER_HEALTH/status" ;;
		collector) url="http://$COLLECTOR_HEALTH/" ;;
		prometheus) url="http://$PROMETHEUS_HTTP/-/ready" ;;
		esac
		if alive "$name"; then
			if http_ok "$url"; then
				printf '%-10s running (pid %s), ready\n' "$name" "$(pid_of "$name")"
			else
				printf '%-10s running (pid %s), NOT ready\n' "$name" "$(pid_of "$name")"
			fi
		else
			printf '%-10s stopped\n' "$name"
		fi
	done
	[ -f "$ENV_FILE" ] && cat "$ENV_FILE"
	return 0
}

case ${1:-} in
install) cmd_install ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env)
	[ -f "$ENV_FILE" ] || die "stack is not up"
	echo "$ENV_FILE"
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
	;;
esac
