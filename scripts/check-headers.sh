#!/bin/sh
# SPDX-License-Identifier: MIT
# The installed headers declare no private name (docs/building.md, "ABI
# and soname"). Private names start with pcw__ or PCW__ (docs/design.md's
# naming scheme). A header declares a name when universal-ctags reports it
# as a macro, function, prototype, variable, extern variable, typedef,
# struct, union or enum tag, or enumerator (struct members are not names a
# program links or collides with, and are not checked).
#
# Exempt, because they are private by construction:
#   - the single-file provider's implementation section: from the line
#     `#if defined(PCW_PROVIDER_IMPLEMENTATION) ...` that opens it to the
#     end of the file (a program sees it only in the one file that asks
#     for the implementation);
#   - a section between a line holding `pcw-private-begin:` (followed by
#     why it must be in the header, e.g. "the inline fast paths read it")
#     and the next line holding `pcw-private-end`. A begin without a reason
#     or without its end is an error.
# Usage: scripts/check-headers.sh HEADER...
set -eu
command -v ctags >/dev/null || { echo "check-headers: needs ctags (universal-ctags)" >&2; exit 2; }
fail=0
for h in "$@"; do
    # Exempt line ranges, "first last" per line.
    ranges=$(awk -v h="$h" '
        /pcw-private-begin:/ {
            if (open) { printf "check-headers: %s:%d: pcw-private-begin inside another\n", h, NR > "/dev/stderr"; bad = 1 }
            line = $0; sub(/.*pcw-private-begin:[ \t]*/, "", line); sub(/[ \t]*\*\/.*$/, "", line)
            if (line == "") { printf "check-headers: %s:%d: pcw-private-begin: says not why\n", h, NR > "/dev/stderr"; bad = 1 }
            open = NR; next }
        /pcw-private-end/ {
            if (!open) { printf "check-headers: %s:%d: pcw-private-end without a begin\n", h, NR > "/dev/stderr"; bad = 1 }
            print open, NR; open = 0; next }
        /^#if defined\(PCW_PROVIDER_IMPLEMENTATION\)/ { print NR, 1e9 }
        END {
            if (open) { printf "check-headers: %s:%d: pcw-private-begin without its end\n", h, open > "/dev/stderr"; bad = 1 }
            exit bad }' "$h") || fail=1
    bad=$(ctags -x --language-force=C --kinds-C=dfpvxtsuge -o - "$h" |
        awk -v ranges="$ranges" -v h="$h" '
            BEGIN { n = split(ranges, r, /[ \n]+/) }
            $1 ~ /^(pcw|PCW)__/ {
                line = $3 + 0
                for (i = 1; i + 1 <= n; i += 2) if (line >= r[i] + 0 && line <= r[i + 1] + 0) next
                printf "    %s:%d: %s %s\n", h, line, $2, $1 }' | sort -t: -k2,2n)
    if [ -n "$bad" ]; then
        echo "check-headers: $h declares private names outside a pcw-private section:" >&2
        echo "$bad" >&2
        fail=1
    fi
done
[ $fail -eq 0 ] || exit 1
echo "check-headers: $# installed headers declare no pcw__ name outside their private sections"
