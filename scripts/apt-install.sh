#!/usr/bin/env bash
# Copyright The otelretry Authors
# SPDX-License-Identifier: Apache-2.0
# apt-install.sh PACKAGE...: installs Debian packages with apt-get, as root
# or through sudo, and says so plainly when it can be neither. The one
# place the scripts install from Debian (test.sh, validate-compose.sh,
# stack.sh).
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: scripts/apt-install.sh PACKAGE..." >&2
	exit 2
fi
if [ "$(id -u)" -eq 0 ]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1; then
	as_root=(sudo)
else
	echo "apt-install: need root, or sudo, to install Debian's $*" >&2
	exit 1
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
