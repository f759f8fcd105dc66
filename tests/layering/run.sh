#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/layering/run.sh - tests of scripts/check-layering.py on small trees
# of objects (make check-layering runs it before checking the real tree):
#   clean       layers that call downwards only, two tools with a function
#               of the same name each: passes;
#   loop        fetch.c -> values.c -> query.c -> fetch.c in one folder:
#               fails, naming the three files in the loop's order;
#   libtools    an object of lib/ calling a function defined in tools/;
#   folderloop  lib/a -> lib/b -> lib/a, with no loop inside either folder;
#   tooltool    one tool calling a function of another tool's folder.
# Usage: tests/layering/run.sh CC
set -u
cc=${1:-cc}
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../scripts/check-layering.py"
tmp=$(mktemp -d /tmp/pcw-layering.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# expect CASE STATUS PATTERN...: build CASE's objects, run the check, and
# compare its exit status and each pattern (grep -E) with what it printed.
expect() {
    case=$1 want=$2
    shift 2
    objs=
    for src in $(cd "$here/$case" && find . -name '*.c' | sort); do
        obj="$tmp/$case/${src%.c}.o"
        mkdir -p "$(dirname "$obj")"
        "$cc" -c -o "$obj" "$here/$case/$src" || { echo "layering test $case: cannot compile $src"; failed=$((failed + 1)); return; }
        objs="$objs $obj"
    done
    # shellcheck disable=SC2086 # one word per object
    python3 "$check" --root "$tmp/$case" $objs > "$tmp/$case.out" 2>&1
    got=$?
    ok=1
    [ "$got" -eq "$want" ] || { echo "layering test $case: exit status $got, want $want"; ok=0; }
    for pat in "$@"; do
        grep -Eq -- "$pat" "$tmp/$case.out" || { echo "layering test $case: no line matches '$pat'"; ok=0; }
    done
    if [ $ok -eq 1 ]; then
        passed=$((passed + 1))
    else
        sed 's/^/    | /' "$tmp/$case.out"
        failed=$((failed + 1))
    fi
}

expect clean 0 '^check-layering: 8 objects in 5 folders'
expect loop 1 'lib/q: files call each other in a loop: fetch\.c -> values\.c \(values\), values\.c -> query\.c \(query\), query\.c -> fetch\.c \(fetch\)' \
    "the loop's files: fetch\.c query\.c values\.c\)" '1 rule break'
expect libtools 1 'lib/c: lib/ calls into tools/: lib/c/read\.c -> tools/dump/main\.c \(dump_status\)'
expect folderloop 1 'folders call each other in a loop' 'lib/a -> lib/b: lib/a/x\.c -> lib/b/y\.c \(y\)' \
    'lib/b -> lib/a: lib/b/y\.c -> lib/a/z\.c \(z\)'
expect tooltool 1 "tools/one: calls another tool's code: tools/one/main\.c -> tools/two/helper\.c \(two_helper\)"

echo "check-layering tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
