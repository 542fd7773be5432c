#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Local observability stack for the otelretry end-to-end test, all on
# 127.0.0.1 with explicit ports:
#   - Jaeger v2 (built from tools/jaeger), Prometheus (Debian package, with
#     exemplar storage), VictoriaLogs (built from tools/victorialogs; the
#     log store);
#   - the Collector of collector-config.yaml: OTLP in, traces to Jaeger,
#     metrics to Prometheus, logs to VictoriaLogs;
#   - the tiered deployment of deploy/tiered/: an agent that load-balances
#     traces by trace id over two tail-sampling Collectors, which export to
#     Jaeger; the agent passes metrics and logs (never sampled) on to the
#     Collector.
#   All four run one binary, built from deploy/collector/otelcol/ (the Go
#   module that ocb generates from deploy/collector/manifest.yaml; the
#   generate command below regenerates it).
#
# Usage: scripts/stack.sh install|generate|packages|up|down|status|env|ports
#   install  install Debian's prometheus (if missing; scripts/apt-install.sh); build the Collector,
#            Jaeger and VictoriaLogs into the cache (each skipped when its
#            inputs are unchanged)
#   generate build ocb (tools/ocb) and regenerate deploy/collector/otelcol/
#            from deploy/collector/manifest.yaml
#   packages only the Debian packages of install (curl, prometheus), so that
#            install may then build in the background without apt-get
#   up       start the seven programs, wait until they are ready, write the
#            env file (scripts/stack.sh env prints its path); it stops what
#            it started before, and the stacks of checkouts gone, first
#   down     stop whatever `up` started, and the stacks of checkouts gone since
#            theirs (a moved one; always exits 0; safe in a trap)
#   status   show pids and readiness
#   env      print the path of the env file written by `up`
#   ports    list every listening address
#
# Environment:
#   OTELRETRY_CACHE      build cache (default $HOME/.cache/otelretry; a
#                        relative one is read from the checkout, as below)
#   OTELRETRY_RUN_DIR    pids, logs, env file, Prometheus data (default
#                        $OTELRETRY_CACHE/run/ID, one per checkout: another
#                        checkout's stack is left alone, and its ports are
#                        reported in use, unless that checkout is gone; a
#                        relative one is inside the checkout, and goes with
#                        it: removing the checkout then leaves the stack to
#                        nobody, so stop it first)
#   OTELRETRY_STACK_TTL  seconds after which a watchdog stops the stack (default
#                        1800; it runs a copy of this script, so that it still
#                        can once the checkout was removed)
#   OTELRETRY_UP_TIMEOUT seconds to wait for readiness (default 60)
#   OTELRETRY_PROMETHEUS_BIN  the Prometheus to run (default /usr/bin/prometheus,
#                        Debian's; a relative one is read from the checkout)
#   OTELRETRY_PLAIN_SUCCESS_PERCENT  share of plain successes the samplers keep (default 10;
#                        the shipped sampler.yaml defaults to 5)
#   OTELRETRY_DECISION_WAIT  the samplers' decision_wait (default 5s)
#   OTELRETRY_COLLECTOR_OTLP_HTTP, OTELRETRY_JAEGER_QUERY_HTTP, OTELRETRY_PROMETHEUS_HTTP,
#   OTELRETRY_VICTORIALOGS_HTTP, ...
#                        listening addresses (defaults below, all on 127.0.0.1;
#                        `scripts/stack.sh ports` lists them)
set -euo pipefail

SELF=$(readlink -f "$0") # its usage is its header; a link to it is its checkout's
cd "$(dirname "$SELF")/.."
ROOT=$(pwd -P) # one checkout, one run directory, by whatever path it is reached

# Absolute, relative ones read from the checkout: the watchdog and
# stop_orphans run a copy of this script from the run directory.
# One spelling of each (no "//", no trailing "/"): the programs are known by
# the paths in their command lines.
absolute() {
	local p
	case $1 in /*) p=$1 ;; *) p=$ROOT/$1 ;; esac
	while [[ $p == *//* ]]; do p=${p//\/\//\/}; done
	[ "$p" = / ] || p=${p%/}
	echo "$p"
}
CACHE=$(absolute "${OTELRETRY_CACHE:-$HOME/.cache/otelretry}")
RUN=$(absolute "${OTELRETRY_RUN_DIR:-$CACHE/run/$(printf '%s' "$ROOT" | sha256sum | cut -c1-16)}")
BIN=$CACHE/bin
STAMPS=$CACHE/stamps
COLLECTOR_SRC=$ROOT/deploy/collector/otelcol
COLLECTOR_BIN=$BIN/otelcol-otelretry
JAEGER_BIN=$BIN/jaeger
VICTORIALOGS_BIN=$BIN/victoria-logs
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
VICTORIALOGS_HTTP=${OTELRETRY_VICTORIALOGS_HTTP:-127.0.0.1:19428}
AGENT_OTLP_GRPC=${OTELRETRY_AGENT_OTLP_GRPC:-127.0.0.1:15317}
AGENT_OTLP_HTTP=${OTELRETRY_AGENT_OTLP_HTTP:-127.0.0.1:15318}
AGENT_HEALTH=${OTELRETRY_AGENT_HEALTH:-127.0.0.1:15133}
AGENT_TELEMETRY_PORT=${OTELRETRY_AGENT_TELEMETRY_PORT:-15888}
SAMPLER1_OTLP_GRPC=${OTELRETRY_SAMPLER1_OTLP_GRPC:-127.0.0.1:16317}
SAMPLER1_HEALTH=${OTELRETRY_SAMPLER1_HEALTH:-127.0.0.1:16133}
SAMPLER1_TELEMETRY_PORT=${OTELRETRY_SAMPLER1_TELEMETRY_PORT:-16888}
SAMPLER2_OTLP_GRPC=${OTELRETRY_SAMPLER2_OTLP_GRPC:-127.0.0.1:17317}
SAMPLER2_HEALTH=${OTELRETRY_SAMPLER2_HEALTH:-127.0.0.1:17133}
SAMPLER2_TELEMETRY_PORT=${OTELRETRY_SAMPLER2_TELEMETRY_PORT:-17888}
PLAIN_SUCCESS_PERCENT=${OTELRETRY_PLAIN_SUCCESS_PERCENT:-10}
DECISION_WAIT=${OTELRETRY_DECISION_WAIT:-5s}

# Start order: each program's downstream is up before it.
SERVICES=(victorialogs jaeger collector sampler-1 sampler-2 agent prometheus)

log() { printf '[stack] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Tool builds: no cgo, no toolchain download, build cache outside the repo.
go_env() {
	env CGO_ENABLED=0 GOTOOLCHAIN=local GOCACHE="$CACHE/go-build" GOWORK=off "$@"
}

# The stack's binaries are built without optimization or inlining, as
# ocb's debug_compilation builds a Collector: they serve a test for
# seconds, and a cold build takes about half the time (VictoriaLogs: 64 s
# against 123 s on 2 cores; CONTRIBUTING.md gives the figures). Nor does
# the compiler write DWARF, which the linker's -w would drop: the
# Collector's cold build about 12 % fewer CPU seconds. It is part of every
# build's stamp, so that a change rebuilds.
STACK_GCFLAGS="all=-N -l -dwarf=false"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- install

install_prometheus() {
	if [ -x "$PROMETHEUS_BIN" ]; then
		log "prometheus: $("$PROMETHEUS_BIN" --version 2>&1 | head -n1)"
		return
	fi
	log "prometheus: installing Debian package"
	"$ROOT/scripts/apt-install.sh" prometheus
	[ -x "$PROMETHEUS_BIN" ] || die "prometheus not found at $PROMETHEUS_BIN after install"
	log "prometheus: $("$PROMETHEUS_BIN" --version 2>&1 | head -n1)"
}

install_curl() {
	command -v curl >/dev/null 2>&1 && return
	"$ROOT/scripts/apt-install.sh" curl ca-certificates
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

# The Collector: the committed module that ocb generated, built as ocb's
# debug_compilation would build it.
build_collector() {
	(cd "$COLLECTOR_SRC" && go_env go build -trimpath -gcflags="$STACK_GCFLAGS" -ldflags='-s -w' -o "$COLLECTOR_BIN" .)
}

# check_generated: deploy/collector/otelcol/ is what ocb generates from the
# manifest: its go.mod requires every module the manifest names, at the
# manifest's version, and its components.go imports each. A cheap check
# that catches an edit of the manifest without `scripts/stack.sh generate`;
# check_components then checks the binary against the configs.
check_generated() {
	local mod ver missing=0
	while read -r mod ver; do
		grep -q "^[[:space:]]*$mod $ver\( \|\$\)" "$COLLECTOR_SRC/go.mod" && grep -q "\"$mod[\"/]" "$COLLECTOR_SRC/components.go" "$COLLECTOR_SRC/main.go" || {
			log "deploy/collector/otelcol/ lacks $mod $ver"
			missing=1
		}
	done < <(awk '$1 == "-" && $2 == "gomod:" { print $3, $4 } $1 == "gomod:" { print $2, $3 }' "$ROOT/deploy/collector/manifest.yaml")
	[ "$missing" -eq 0 ] || die "deploy/collector/otelcol/ is not generated from deploy/collector/manifest.yaml: run scripts/stack.sh generate"
}

# generate: ocb of the manifest's release (tools/ocb) writes the
# distribution's sources (--skip-compilation) into a scratch directory; they
# replace deploy/collector/otelcol/'s, each with the license header.
cmd_generate() {
	local dir f
	mkdir -p "$BIN"
	(cd "$ROOT/tools/ocb" && go_env go build -trimpath -o "$OCB_BIN" go.opentelemetry.io/collector/cmd/builder)
	dir=$(mktemp -d)
	awk -v out="$dir" '{ print } /^dist:/ { print "  output_path: " out }' \
		"$ROOT/deploy/collector/manifest.yaml" >"$dir.yaml"
	go_env "$OCB_BIN" --config "$dir.yaml" --skip-compilation
	for f in "$dir"/*.go; do
		{
			printf '// Copyright The otelretry Authors\n// SPDX-License-Identifier: Apache-2.0\n\n'
			cat "$f"
		} >"$COLLECTOR_SRC/$(basename "$f")"
	done
	# ocb's templates are not gofmt's order; scripts/test.sh checks gofmt.
	gofmt -w "$COLLECTOR_SRC"
	cp "$dir/go.mod" "$dir/go.sum" "$COLLECTOR_SRC/"
	rm -rf "$dir" "$dir.yaml"
	check_generated
	log "deploy/collector/otelcol/ generated from deploy/collector/manifest.yaml"
}

build_jaeger() {
	(cd "$ROOT/tools/jaeger" && go_env go build -trimpath -gcflags="$STACK_GCFLAGS" -ldflags='-s -w' -o "$JAEGER_BIN" github.com/jaegertracing/jaeger/cmd/jaeger)
}

# VictoriaLogs from its Go module, pinned by tools/victorialogs (the release
# docker-compose.yaml runs). Pure Go (CGO_ENABLED=0, as every tool here):
# its zstd falls back to klauspost/compress, so no C toolchain is needed.
build_victorialogs() {
	(cd "$ROOT/tools/victorialogs" && go_env go build -trimpath -gcflags="$STACK_GCFLAGS" -ldflags='-s -w' -o "$VICTORIALOGS_BIN" github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs)
}

# Component types the configs use: the keys under receivers/processors/
# exporters/extensions, without the /name suffix.
config_components() {
	awk '
		FNR == 1 { section = "" }
		/^[a-z_]+:/ { section = $1; sub(":", "", section); next }
		section ~ /^(receivers|processors|exporters|extensions)$/ && /^  [a-z0-9_]+(\/[^:]*)?:/ {
			name = $1; sub(":.*", "", name); sub("/.*", "", name); print section "/" name
		}' "$@" | sort -u
}

# Component types compiled into a Collector binary (`components` subcommand).
binary_components() {
	"$1" components 2>/dev/null | awk '
		/^[a-z]+:/ { section = $1; sub(":", "", section); next }
		section ~ /^(receivers|processors|exporters|extensions)$/ && /^ *- name:/ { print section "/" $3 }' | sort -u
}

# check_components BINARY MANIFEST CONFIG...: the binary has exactly the
# components the configs use together, and each config validates.
check_components() {
	local bin=$1 manifest=$2 want have cfg
	shift 2
	want=$(config_components "$@")
	have=$(binary_components "$bin")
	if [ "$want" != "$have" ]; then
		log "${*#"$ROOT/"} use:"
		printf '%s\n' "$want" | sed 's/^/  /' >&2
		log "the Collector built from deploy/collector/$manifest has:"
		printf '%s\n' "$have" | sed 's/^/  /' >&2
		die "deploy/collector/$manifest and its configs disagree"
	fi
	for cfg in "$@"; do
		"$bin" validate --config "$cfg" >/dev/null 2>"$CACHE/validate.log" ||
			{ cat "$CACHE/validate.log" >&2; die "${cfg#"$ROOT/"} does not validate"; }
	done
	log "$(basename "$bin"): components match ${*#"$ROOT/"} ($(echo "$want" | wc -l)); configs validate"
}

check_configs() {
	check_components "$COLLECTOR_BIN" manifest.yaml "$ROOT/collector-config.yaml" "$ROOT/deploy/tiered/agent.yaml" "$ROOT/deploy/tiered/sampler.yaml"
	"$JAEGER_BIN" validate --config "$ROOT/deploy/jaeger/config.yaml" >/dev/null 2>"$CACHE/validate.log" ||
		{ cat "$CACHE/validate.log" >&2; die "deploy/jaeger/config.yaml does not validate"; }
	local promtool
	promtool=$(dirname "$PROMETHEUS_BIN")/promtool
	if [ -x "$promtool" ]; then
		"$promtool" check config "$ROOT/deploy/prometheus/prometheus.yml" >/dev/null 2>"$CACHE/validate.log" ||
			{ cat "$CACHE/validate.log" >&2; die "deploy/prometheus/prometheus.yml does not validate"; }
	fi
}

cmd_install() {
	local start=$SECONDS gov pid failed=0
	local pids=()
	mkdir -p "$BIN" "$STAMPS"
	install_curl
	install_prometheus
	gov="$(go env GOVERSION) $STACK_GCFLAGS"
	check_generated
	# Three independent builds, side by side: a cold build spends much of
	# its time fetching modules and linking (one core), so together they
	# finish well before one after the other. Each stamp is written only
	# when its build succeeded.
	build collector "$(hash_of "$COLLECTOR_SRC"/*; echo "$gov")" "$COLLECTOR_BIN" build_collector &
	pids+=($!)
	build jaeger "$(hash_of "$ROOT/tools/jaeger/go.mod" "$ROOT/tools/jaeger/go.sum"; echo "$gov")" "$JAEGER_BIN" build_jaeger &
	pids+=($!)
	build victorialogs "$(hash_of "$ROOT/tools/victorialogs/go.mod" "$ROOT/tools/victorialogs/go.sum"; echo "$gov")" "$VICTORIALOGS_BIN" build_victorialogs &
	pids+=($!)
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	[ "$failed" -eq 0 ] || die "a build failed (logs: $CACHE/build-*.log)"
	check_configs
	log "install done in $((SECONDS - start))s"
}

# ---------------------------------------------------------------- up/down

pid_of() { cat "$RUN/$1.pid" 2>/dev/null || true; }

# alive NAME: the recorded pid runs and is still the program we started.
alive() {
	local pid
	pid=$(pid_of "$1")
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && grep -qaF -- "$(expected_cmd "$1")" "/proc/$pid/cmdline"
}

# starting NAME: the recorded pid is the program, or still the shell that
# forked it, before its exec (under load, that can take a second), not
# yet a process that ended (a zombie, until the shell waits for it).
starting() {
	local pid state
	alive "$1" && return 0
	pid=$(pid_of "$1")
	[ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
	state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

expected_cmd() {
	case $1 in
	jaeger) echo "$JAEGER_BIN" ;;
	collector | agent | sampler-1 | sampler-2) echo "$COLLECTOR_BIN" ;;
	prometheus) echo "--config.file=$RUN/prometheus.yml" ;; # its run's, whichever binary runs it
	victorialogs) echo "$VICTORIALOGS_BIN" ;;
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
		if ! starting "$name"; then
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

# ports: every listening address, one per line: program, address, use.
ports() {
	cat <<EOF
jaeger      $JAEGER_OTLP_GRPC   OTLP/gRPC in (from the Collector and the samplers)
jaeger      $JAEGER_OTLP_HTTP   OTLP/HTTP in
jaeger      $JAEGER_QUERY_HTTP   query HTTP API (/api/traces, /api/v3) and UI
jaeger      $JAEGER_QUERY_GRPC   query gRPC API
jaeger      $JAEGER_HEALTH   health (/status)
jaeger      127.0.0.1:$JAEGER_TELEMETRY_PORT   own metrics
collector   $COLLECTOR_OTLP_GRPC   OTLP/gRPC in (applications; the agent's metrics and logs)
collector   $COLLECTOR_OTLP_HTTP   OTLP/HTTP in (applications)
collector   $COLLECTOR_PROM   Prometheus exporter (/metrics, OpenMetrics with exemplars)
collector   $COLLECTOR_HEALTH   health_check
collector   127.0.0.1:$COLLECTOR_TELEMETRY_PORT   own metrics
agent       $AGENT_OTLP_GRPC   OTLP/gRPC in (applications, tiered)
agent       $AGENT_OTLP_HTTP   OTLP/HTTP in (applications, tiered)
agent       $AGENT_HEALTH   health_check
agent       127.0.0.1:$AGENT_TELEMETRY_PORT   own metrics
sampler-1   $SAMPLER1_OTLP_GRPC   OTLP/gRPC in (from the agent)
sampler-1   $SAMPLER1_HEALTH   health_check
sampler-1   127.0.0.1:$SAMPLER1_TELEMETRY_PORT   own metrics
sampler-2   $SAMPLER2_OTLP_GRPC   OTLP/gRPC in (from the agent)
sampler-2   $SAMPLER2_HEALTH   health_check
sampler-2   127.0.0.1:$SAMPLER2_TELEMETRY_PORT   own metrics
prometheus  $PROMETHEUS_HTTP   HTTP API and UI (/api/v1/query, /api/v1/query_exemplars)
victorialogs $VICTORIALOGS_HTTP  OTLP logs in (/insert/opentelemetry/v1/logs, from the Collector), LogsQL (/select/logsql/query)
EOF
}

# start_sampler NAME OTLP_GRPC HEALTH TELEMETRY_PORT
start_sampler() {
	start "$1" env \
		OTELCOL_OTLP_GRPC_ENDPOINT="$2" OTELCOL_JAEGER_ENDPOINT="$JAEGER_OTLP_GRPC" \
		OTELCOL_SAMPLER_NAME="$1" OTELCOL_PLAIN_SUCCESS_PERCENT="$PLAIN_SUCCESS_PERCENT" \
		OTELCOL_DECISION_WAIT="$DECISION_WAIT" OTELCOL_HEALTH_ENDPOINT="$3" \
		OTELCOL_TELEMETRY_HOST=127.0.0.1 OTELCOL_TELEMETRY_PORT="$4" \
		"$COLLECTOR_BIN" --config "$ROOT/deploy/tiered/sampler.yaml"
}

cmd_up() {
	local start_ms deadline hp name
	start_ms=$(date +%s%N)
	if [ ! -x "$COLLECTOR_BIN" ] || [ ! -x "$JAEGER_BIN" ] || [ ! -x "$PROMETHEUS_BIN" ] || [ ! -x "$VICTORIALOGS_BIN" ]; then
		die "binaries missing: run scripts/stack.sh install first"
	fi
	command -v curl >/dev/null 2>&1 || die "curl missing: run scripts/stack.sh install first"
	cmd_down quiet
	stop_orphans
	for hp in $(ports | awk '{ print $2 }'); do
		port_in_use "$hp" && die "$hp is already in use"
	done
	rm -rf "$RUN/logs" "$RUN/prometheus-data" "$RUN/victorialogs-data" "$ENV_FILE"
	mkdir -p "$RUN/logs" "$RUN/prometheus-data" "$RUN/victorialogs-data" "$RUN/watchdog/scripts"
	# Whose stack this is, and a copy of this script for the watchdog and
	# stop_orphans to stop it with once the checkout is gone.
	echo "$ROOT" >"$RUN/root.new" && mv -f "$RUN/root.new" "$RUN/root" # never read half written
	cp "$ROOT/scripts/stack.sh" "$RUN/watchdog/scripts/stack.sh"
	sed "s|127.0.0.1:18889|$COLLECTOR_PROM|" "$ROOT/deploy/prometheus/prometheus.yml" >"$RUN/prometheus.yml"

	# On any failure below, stop what was started.
	trap 'cmd_down quiet' EXIT

	# The log store first: the Collector exports logs to it.
	start victorialogs "$VICTORIALOGS_BIN" \
		-httpListenAddr="$VICTORIALOGS_HTTP" \
		-storageDataPath="$RUN/victorialogs-data" \
		-retentionPeriod=1d
	start jaeger env \
		JAEGER_OTLP_GRPC_ENDPOINT="$JAEGER_OTLP_GRPC" JAEGER_OTLP_HTTP_ENDPOINT="$JAEGER_OTLP_HTTP" \
		JAEGER_QUERY_HTTP_ENDPOINT="$JAEGER_QUERY_HTTP" JAEGER_QUERY_GRPC_ENDPOINT="$JAEGER_QUERY_GRPC" \
		JAEGER_HEALTH_ENDPOINT="$JAEGER_HEALTH" \
		JAEGER_TELEMETRY_HOST=127.0.0.1 JAEGER_TELEMETRY_PORT="$JAEGER_TELEMETRY_PORT" \
		"$JAEGER_BIN" --config "$ROOT/deploy/jaeger/config.yaml"
	start collector env \
		OTELCOL_OTLP_GRPC_ENDPOINT="$COLLECTOR_OTLP_GRPC" OTELCOL_OTLP_HTTP_ENDPOINT="$COLLECTOR_OTLP_HTTP" \
		OTELCOL_JAEGER_ENDPOINT="$JAEGER_OTLP_GRPC" OTELCOL_PROMETHEUS_ENDPOINT="$COLLECTOR_PROM" \
		OTELCOL_VICTORIALOGS_URL="http://$VICTORIALOGS_HTTP" OTELCOL_HEALTH_ENDPOINT="$COLLECTOR_HEALTH" \
		OTELCOL_TELEMETRY_HOST=127.0.0.1 OTELCOL_TELEMETRY_PORT="$COLLECTOR_TELEMETRY_PORT" \
		"$COLLECTOR_BIN" --config "$ROOT/collector-config.yaml"
	start_sampler sampler-1 "$SAMPLER1_OTLP_GRPC" "$SAMPLER1_HEALTH" "$SAMPLER1_TELEMETRY_PORT"
	start_sampler sampler-2 "$SAMPLER2_OTLP_GRPC" "$SAMPLER2_HEALTH" "$SAMPLER2_TELEMETRY_PORT"
	start agent env \
		OTELCOL_OTLP_GRPC_ENDPOINT="$AGENT_OTLP_GRPC" OTELCOL_OTLP_HTTP_ENDPOINT="$AGENT_OTLP_HTTP" \
		OTELCOL_SAMPLERS="[$SAMPLER1_OTLP_GRPC, $SAMPLER2_OTLP_GRPC]" OTELCOL_METRICS_ENDPOINT="$COLLECTOR_OTLP_GRPC" \
		OTELCOL_LOGS_ENDPOINT="$COLLECTOR_OTLP_GRPC" \
		OTELCOL_HEALTH_ENDPOINT="$AGENT_HEALTH" \
		OTELCOL_TELEMETRY_HOST=127.0.0.1 OTELCOL_TELEMETRY_PORT="$AGENT_TELEMETRY_PORT" \
		"$COLLECTOR_BIN" --config "$ROOT/deploy/tiered/agent.yaml"
	# Exemplar storage: Prometheus keeps the exemplars of the OpenMetrics
	# exposition (trace ids on histogram buckets and counters).
	start prometheus "$PROMETHEUS_BIN" \
		--config.file="$RUN/prometheus.yml" \
		--web.listen-address="$PROMETHEUS_HTTP" \
		--storage.tsdb.path="$RUN/prometheus-data" \
		--storage.tsdb.retention.time=2h \
		--enable-feature=exemplar-storage

	# Watchdog: stops the stack by itself after $TTL seconds if nobody does.
	(
		exec -a stack-watchdog bash -c '
			trap "kill \$sp 2>/dev/null; exit 0" TERM
			sleep "$1" & sp=$!
			wait $sp
			OTELRETRY_WATCHDOG=1 OTELRETRY_CACHE="$3" OTELRETRY_RUN_DIR="$4" OTELRETRY_PROMETHEUS_BIN="$5" \
				bash "$2" down' stack-watchdog "$TTL" "$RUN/watchdog/scripts/stack.sh" "$CACHE" "$RUN" "$PROMETHEUS_BIN"
	) >"$RUN/logs/watchdog.log" 2>&1 </dev/null &
	echo $! >"$RUN/watchdog.pid"

	deadline=$(($(date +%s) + UP_TIMEOUT))
	wait_for victorialogs "$deadline" "http://$VICTORIALOGS_HTTP/health"
	wait_for jaeger "$deadline" "http://$JAEGER_HEALTH/status"
	wait_for jaeger "$deadline" "http://$JAEGER_QUERY_HTTP/api/services"
	wait_for collector "$deadline" "http://$COLLECTOR_HEALTH/"
	wait_for sampler-1 "$deadline" "http://$SAMPLER1_HEALTH/"
	wait_for sampler-2 "$deadline" "http://$SAMPLER2_HEALTH/"
	wait_for agent "$deadline" "http://$AGENT_HEALTH/"
	wait_for prometheus "$deadline" "http://$PROMETHEUS_HTTP/-/ready"
	# The first scrape comes a few seconds after Prometheus is ready.
	wait_for prometheus "$deadline" \
		"http://$PROMETHEUS_HTTP/api/v1/query?query=up%7Bjob%3D%22otel-collector%22%7D%3D%3D1" '"value"'
	trap - EXIT

	cat >"$ENV_FILE" <<EOF
# Written by scripts/stack.sh up; source it before the e2e test.
export OTELRETRY_OTLP_ENDPOINT=http://$COLLECTOR_OTLP_HTTP
export OTELRETRY_OTLP_GRPC_ENDPOINT=http://$COLLECTOR_OTLP_GRPC
export OTELRETRY_AGENT_OTLP_ENDPOINT=http://$AGENT_OTLP_HTTP
export OTELRETRY_AGENT_OTLP_GRPC_ENDPOINT=http://$AGENT_OTLP_GRPC
export OTELRETRY_SAMPLERS="sampler-1 sampler-2"
export OTELRETRY_PLAIN_SUCCESS_PERCENT=$PLAIN_SUCCESS_PERCENT
export OTELRETRY_DECISION_WAIT=$DECISION_WAIT
export OTELRETRY_JAEGER_URL=http://$JAEGER_QUERY_HTTP
export OTELRETRY_PROMETHEUS_URL=http://$PROMETHEUS_HTTP
export OTELRETRY_VICTORIALOGS_URL=http://$VICTORIALOGS_HTTP
export OTELRETRY_SCRAPE_INTERVAL=$(awk '$1 == "scrape_interval:" { print $2; exit }' "$RUN/prometheus.yml")
export OTELRETRY_COLLECTOR_METRICS_URL=http://$COLLECTOR_PROM/metrics
export OTELRETRY_STACK_LOGS=$(printf '%q' "$RUN/logs")
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

# stop_orphans stops the stacks of checkouts that are gone (a run killed
# before its trap, its clone removed), with the copy of this script each
# keeps: another checkout's live stack is left alone.
stop_orphans() {
	local dir root script pids pid
	for dir in "$CACHE"/run/*/; do
		dir=${dir%/}
		[ "$dir" != "$RUN" ] && [ -f "$dir/root" ] || continue
		# Unreadable or empty (an `up` writing it, a `down` removing it):
		# not known to be gone.
		root=$(cat "$dir/root" 2>/dev/null) && [ -n "$root" ] || continue
		[ ! -d "$root" ] || continue
		log "stopping the stack of $root, which is gone" || true
		# Its own copy of this script, or this one when the copy is gone;
		# its run directory is kept, with its pid files, unless that stop
		# succeeded.
		script=$dir/watchdog/scripts/stack.sh
		[ -f "$script" ] || script=$ROOT/scripts/stack.sh
		pids=$(cat "$dir"/*.pid 2>/dev/null) || true
		OTELRETRY_CACHE=$CACHE OTELRETRY_RUN_DIR=$dir OTELRETRY_ORPHAN_STOP=1 \
			bash "$script" down >/dev/null 2>&1 || true
		# Stopped when none of its programs runs on: a pid that lives with
		# its run directory or its checkout in its command line.
		for pid in $pids; do
			[ -r "/proc/$pid/cmdline" ] || continue
			if grep -qaF -e "$dir" -e "$root" "/proc/$pid/cmdline"; then
				log "the stack of $root still runs (pid $pid): its run directory $dir is kept" || true
				continue 2
			fi
		done
		rm -rf "$dir"
	done
}

cmd_down() {
	local name
	[ -d "$RUN" ] || return 0
	# Reverse start order: upstream first, so nothing exports into a
	# stopped program.
	for name in prometheus agent sampler-1 sampler-2 collector jaeger victorialogs; do
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
		agent) url="http://$AGENT_HEALTH/" ;;
		sampler-1) url="http://$SAMPLER1_HEALTH/" ;;
		sampler-2) url="http://$SAMPLER2_HEALTH/" ;;
		prometheus) url="http://$PROMETHEUS_HTTP/-/ready" ;;
		victorialogs) url="http://$VICTORIALOGS_HTTP/health" ;;
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
generate) cmd_generate ;;
packages)
	install_curl
	install_prometheus
	;;
up) cmd_up ;;
down)
	cmd_down
	# A checkout moved or renamed since its `up` has its stack under its
	# old path, now gone: stop such stacks too (not from a stop of one).
	# Errors suspend nothing here: down always exits 0.
	[ -n "${OTELRETRY_ORPHAN_STOP:-}${OTELRETRY_WATCHDOG:-}" ] || stop_orphans || true
	;;
status) cmd_status ;;
env)
	[ -f "$ENV_FILE" ] || die "stack is not up"
	echo "$ENV_FILE"
	;;
ports) ports ;;
*)
	sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'
	exit 2
	;;
esac
