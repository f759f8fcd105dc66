#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages (man/*.1), checked so they cannot drift from the tools:
#   - each renders with `man --warnings` without a single warning;
#   - every tool (tools/*/ but tools/common/, what every tool links in)
#     has one, and every one names a tool;
#   - every option the tool's --help prints appears in its page;
#   - the page's header says pcw's version (lib/pcw/version.h).
# Usage: scripts/check-man.sh BUILD_DIR VERSION   (from the repository root)
set -eu
build=$1 version=$2
fail=0 pages=0 options=0
export MANWIDTH=80 LC_ALL=C.UTF-8

for dir in tools/*/; do
    tool=$(basename "$dir")
    [ "$tool" = common ] && continue
    [ -f "man/$tool.1" ] || { echo "check-man: tools/$tool has no man page man/$tool.1" >&2; fail=1; }
done

for page in man/*.1; do
    tool=$(basename "$page" .1)
    pages=$((pages + 1))
    if [ ! -d "tools/$tool" ]; then
        echo "check-man: $page names no tool (tools/$tool/ does not exist)" >&2
        fail=1
        continue
    fi
    # man prints troff's and the macros' warnings on stderr and still exits 0.
    warnings=$(man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || {
        echo "check-man: man could not render $page" >&2; fail=1; }
    if [ -n "$warnings" ]; then
        echo "check-man: $page:" >&2
        echo "$warnings" | sed 's/^/    /' >&2
        fail=1
    fi
    if ! head -n 20 "$page" | grep -q "^\.TH .*\"pcw $version\""; then
        echo "check-man: $page: its .TH line does not say \"pcw $version\" (lib/pcw/version.h)" >&2
        fail=1
    fi
    # Options in --help: a dash or two, a letter, then letters, digits, dots
    # and dashes, after a space, a comma, '[' or '(' or at a line's start.
    help=$("$build/$tool" --help 2>&1) || {
        echo "check-man: $build/$tool --help failed" >&2; fail=1; continue; }
    opts=$(printf '%s\n' "$help" |
        grep -oE '(^|[ ,[(])--?[A-Za-z]([A-Za-z0-9.-]*[A-Za-z0-9])?' |
        sed -E 's/^[ ,[(]//' | sort -u)
    # The page's source with roff's \- written as -.
    text=$(sed 's/\\-/-/g' "$page")
    for opt in $opts; do
        options=$((options + 1))
        re=$(printf '%s' "$opt" | sed 's/\./\\./g')
        if ! printf '%s\n' "$text" | grep -qE "(^|[^A-Za-z0-9-])$re([^A-Za-z0-9.-]|\$)"; then
            echo "check-man: $page does not mention $opt (from $tool --help)" >&2
            fail=1
        fi
    done
done
[ $fail -eq 0 ] || exit 1
echo "check-man: $pages pages render without warnings and name all $options options of --help"
