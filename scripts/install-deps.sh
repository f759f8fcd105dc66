#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages pcw needs, if any are missing.
# As root: runs apt-get. Otherwise: prints the apt-get line and fails.
# Usage: scripts/install-deps.sh PACKAGE...
set -eu
missing=""
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all packages present"
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing packages:$missing" >&2
    echo "deps: run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
