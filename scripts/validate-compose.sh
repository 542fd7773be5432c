#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# Validates docker-compose.yaml with `docker-compose config` (Debian's
# docker-compose package, installed if missing), every profile included,
# and checks that:
#   - every file it mounts exists and every image is pinned;
#   - the Collector images are the release the e2e stack builds: the
#     services running collector-config.yaml and those running
#     deploy/tiered/* use the contrib release of
#     deploy/collector/manifest.yaml;
#   - the VictoriaLogs image is the release tools/victorialogs builds for
#     the e2e stack;
#   - every long-running service has a healthcheck, and every depends_on
#     waits for health (or, for the one-shot probe, for completion).
# No container engine is needed and no container is started.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."

if ! command -v docker-compose >/dev/null 2>&1; then
	echo "[compose] installing Debian's docker-compose" >&2
	scripts/apt-install.sh docker-compose
fi
# The checks below read the resolved file with Debian's Python and its
# YAML module: not whichever python3 comes first on PATH (a venv's may
# lack it), and not only what docker-compose brought (Debian 13's is Go).
python=/usr/bin/python3
if ! "$python" -c 'import yaml' 2>/dev/null; then
	echo "[compose] installing Debian's python3-yaml" >&2
	scripts/apt-install.sh python3 python3-yaml
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT

compose() { docker-compose --profile tiered -f docker-compose.yaml "$@"; }
compose config >"$out"

status=0
# Images: pinned to a version, never latest.
while read -r image; do
	if [[ $image != *:* || $image == *:latest ]]; then
		echo "[compose] image not pinned: $image" >&2
		status=1
	fi
done < <(awk '$1 == "image:" { print $2 }' "$out")

# contrib_release MANIFEST: the one release of its contrib components.
contrib_release() {
	local versions
	versions=$(awk '/opentelemetry-collector-contrib\// { sub(/^v/, "", $NF); print $NF }' "deploy/collector/$1" | sort -u)
	if [ "$(echo "$versions" | wc -l)" -ne 1 ] || [ -z "$versions" ]; then
		echo "[compose] deploy/collector/$1 mixes contrib releases: $versions" >&2
		return 1
	fi
	echo "$versions"
}
main_release=$(contrib_release manifest.yaml) || status=1
# One binary of one release serves both deployments in the e2e stack.
tier_release=$main_release
# The VictoriaLogs release the e2e stack builds (tools/victorialogs/go.mod).
vl_release=$(awk '$1 == "github.com/VictoriaMetrics/VictoriaLogs" { print $2 }' tools/victorialogs/go.mod)
if [ -z "$vl_release" ]; then
	echo "[compose] tools/victorialogs/go.mod requires no VictoriaLogs release" >&2
	status=1
fi

# Pins and healthchecks, from the resolved configuration (docker-compose
# is Python; its YAML module reads it).
"$python" - "$out" "$main_release" "$tier_release" "$vl_release" <<'EOF' || status=1
import os, sys, yaml

config, main_release, tier_release, vl_release = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
services = yaml.safe_load(open(config))["services"]
ok = True

def fail(msg):
    global ok
    print("[compose] " + msg, file=sys.stderr)
    ok = False

collector = "otel/opentelemetry-collector-contrib"
victorialogs = "victoriametrics/victoria-logs"
if not any(s.get("image", "").startswith(victorialogs + ":") for s in services.values()):
    fail("no %s service" % victorialogs)
for name, svc in services.items():
    # Bind mounts: every source must exist in the repository.
    for v in svc.get("volumes", []):
        src = v.get("source", "") if isinstance(v, dict) else str(v).split(":")[0]
        if src.startswith("/") and not os.path.exists(src):
            fail("%s: mounted path does not exist: %s" % (name, src))
    image = svc.get("image", "")
    mounts = " ".join(str(v) for v in svc.get("volumes", []))
    if image.startswith(collector + ":"):
        want = None
        if "collector-config.yaml" in mounts:
            want = main_release
        elif "deploy/tiered/" in mounts:
            want = tier_release
        if want is None:
            fail("%s: a Collector without a config of the repository" % name)
        elif image != "%s:%s" % (collector, want):
            fail("%s: image %s, but the e2e stack builds and tests %s" % (name, image, want))
    if image.startswith(victorialogs + ":") and image != "%s:%s" % (victorialogs, vl_release):
        fail("%s: image %s, but the e2e stack builds and tests %s" % (name, image, vl_release))
    one_shot = name == "probe"
    if not one_shot and "healthcheck" not in svc:
        fail("%s: no healthcheck" % name)
    deps = svc.get("depends_on", {})
    if isinstance(deps, list):
        fail("%s: depends_on %s does not wait for health" % (name, deps))
        continue
    for dep, cond in deps.items():
        want = "service_completed_successfully" if dep == "probe" else "service_healthy"
        if cond.get("condition") != want:
            fail("%s: depends_on %s with condition %s, want %s" % (name, dep, cond.get("condition"), want))
sys.exit(0 if ok else 1)
EOF

# The Prometheus config it mounts, when promtool is at hand (stack.sh install
# brings it with Debian's prometheus package).
if command -v promtool >/dev/null 2>&1; then
	promtool check config deploy/prometheus/prometheus.compose.yml >/dev/null || status=1
fi

services=$(compose config --services | sort | tr '\n' ' ')
if [ "$status" -eq 0 ]; then
	echo "[compose] docker-compose.yaml is valid (Collector images: contrib $main_release, tier $tier_release; VictoriaLogs $vl_release); services: $services"
fi
exit "$status"
