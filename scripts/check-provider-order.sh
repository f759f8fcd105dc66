#!/bin/sh
# SPDX-License-Identifier: MIT
# The provider's parts call only the parts before them (lib/provider/
# internal.h): for each object, in PROVIDER_PARTS order, every pcw__ symbol
# it uses (nm: undefined) is defined by an object before it. So the
# amalgamation needs no forward declarations between parts, and a call
# "up" (a loop between parts) fails the build that makes libpcw-provider.a.
# Usage: scripts/check-provider-order.sh PART.o...
set -eu
defined=$(mktemp /tmp/pcw-order.XXXXXX)
trap 'rm -f "$defined"' EXIT
fail=0
for o in "$@"; do
    for sym in $(nm -u "$o" | awk '$2 ~ /^pcw__/ { print $2 }'); do
        if ! grep -qx -- "$sym" "$defined"; then
            owner=$(for p in "$@"; do nm --defined-only "$p" | awk -v s="$sym" -v p="$p" '$3 == s { print p }'; done)
            echo "check-provider-order: $o calls $sym, defined ${owner:+in $owner, }not in a part before it (lib/provider/internal.h lists the order)" >&2
            fail=1
        fi
    done
    nm --defined-only "$o" | awk '$3 ~ /^pcw__/ { print $3 }' >> "$defined"
done
exit $fail
