#!/bin/sh
# SPDX-License-Identifier: MIT
# libpcw.so's ABI, checked against its sources (docs/building.md, "ABI and
# soname"):
#   - the soname is libpcw.so.SOVERSION;
#   - no internal function is exported (pcw__*, or anything not named
#     pcw_...): lib/consumer/libpcw.map must hide them;
#   - every exported function is declared in a public header, lib/pcw/;
#   - every public function the static library defines is exported (a map
#     that forgot one would break programs linked against the shared
#     library only), under the version node PCW_SOVERSION or a later minor
#     node PCW_SOVERSION.N.
# Usage: scripts/check-abi.sh LIBPCW_SO LIBPCW_A SOVERSION
set -eu
so=$1 a=$2 soversion=$3
tmp=$(mktemp -d /tmp/pcw-abi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libpcw.so.$soversion" ]; then
    echo "check-abi: $so has soname '$soname', want libpcw.so.$soversion" >&2
    fail=1
fi

# Exported functions and objects, without the version node's own symbol.
nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp/exported"
# objdump -T names each symbol's version node.
objdump -T "$so" | awk '$2 == "g" && $(NF-1) != "*ABS*" && $NF ~ /^pcw/ { print $(NF-1), $NF }' \
    | sort -u > "$tmp/versioned"

bad=$(grep -v '^pcw_[a-z0-9]' "$tmp/exported" || true)
if [ -n "$bad" ]; then
    echo "check-abi: $so exports internal symbols (lib/consumer/libpcw.map must hide them):" >&2
    echo "$bad" | sed 's/^/    /' >&2
    fail=1
fi

while read -r sym; do
    case $sym in pcw_[a-z0-9]*) ;; *) continue ;; esac
    if ! grep -rqw -- "$sym" lib/pcw/; then
        echo "check-abi: $so exports $sym, which no header in lib/pcw/ declares" >&2
        fail=1
    fi
    if ! grep -qE "^PCW_$soversion(\.[0-9]+)? $sym\$" "$tmp/versioned"; then
        echo "check-abi: $sym is not in version node PCW_$soversion or PCW_$soversion.N" >&2
        fail=1
    fi
done < "$tmp/exported"

# The static library's public functions: global, defined, named pcw_<alnum>.
nm -g --defined-only "$a" | awk 'NF == 3 && $3 ~ /^pcw_[a-z0-9]/ { print $3 }' | sort -u > "$tmp/public"
missing=$(comm -23 "$tmp/public" "$tmp/exported")
if [ -n "$missing" ]; then
    echo "check-abi: $so does not export these public functions of $a:" >&2
    echo "$missing" | sed 's/^/    /' >&2
    fail=1
fi

if [ $fail -ne 0 ]; then exit 1; fi
echo "check-abi: $so: soname $soname, $(wc -l < "$tmp/exported") public symbols (PCW_$soversion), no internal ones"
