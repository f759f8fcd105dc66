#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's way from `make demo` to one's own program, as written: the
# exports of its "build-tree" block (PATH and PKG_CONFIG_PATH into build/),
# then every `cc -std=c11 ...` command of its shell blocks, verbatim, in a
# folder holding its <!-- file: NAME --> blocks. The provider runs while the
# consumers build and run; pcwdump (from PATH) must show its instance.
# Nothing is installed. Usage: scripts/build-tree-test.sh (from the top of
# the tree, after `make all` with the default BUILD=build).
set -eu
repo=$(pwd)
tmp=$(mktemp -d /tmp/pcw-build-tree.XXXXXX)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "build-tree-test: $*" >&2; exit 1; }
mkdir -p "$tmp/src" "$tmp/shm"
export PCW_DIR="$tmp/shm"
unset PKG_CONFIG_PATH LD_LIBRARY_PATH || true

# The README's files, then its build-tree exports and cc commands (a
# command continued with a backslash is joined into one line).
./scripts/readme-files.sh "$tmp/src"
awk -v exports="$tmp/exports.sh" -v ccs="$tmp/cc.sh" '
    { sub(/^   /, "") }                       # blocks inside a numbered list
    /^<!-- sh: build-tree -->$/ { want = "exports"; next }
    want == "exports" && /^```sh$/ { inblock = "exports"; want = ""; next }
    /^```sh$/ { inblock = "sh"; next }
    inblock != "" && /^```$/ { inblock = ""; next }
    inblock == "exports" { print > exports; next }
    inblock == "sh" {
        line = cont $0; cont = ""
        if (line ~ /\\$/) { sub(/\\$/, "", line); cont = line; next }
        if (line ~ /^cc -std=c11 /) print line > ccs
    }
' README.md
[ -s "$tmp/exports.sh" ] || fail "README has no <!-- sh: build-tree --> block"
[ -s "$tmp/cc.sh" ] || fail "README has no cc -std=c11 command"
for f in web.h web.c main.c; do [ -s "$tmp/src/$f" ] || fail "README has no block for $f"; done

# The exports, run from the top of the tree as the README says.
. "$tmp/exports.sh"
command -v pcwdump | grep -q "^$repo/build/pcwdump$" || fail "PATH does not reach build/pcwdump"

cd "$tmp/src"
grep '^cc -std=c11 main.c web.c ' "$tmp/cc.sh" > provider.sh || fail "README does not build main.c web.c"
sh -e provider.sh || fail "the README's provider does not build: $(cat provider.sh)"
[ -x web ] || fail "the README's provider command made no ./web"
./web & pid=$!
i=0
until ls "$PCW_DIR"/pcw-*/*.seg >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "the provider did not start"
    sleep 0.1
done
out=$(pcwdump --counterset "Web Server")
echo "$out" | grep -q "example.org" || fail "pcwdump did not show the instance: $out"
n=0
while IFS= read -r cmd; do
    case "$cmd" in "cc -std=c11 main.c web.c "*) continue ;; esac
    # The commands' own `&& ./prog` runs the consumer against the provider.
    sh -ec "$cmd" > out.txt 2>&1 || { cat out.txt >&2; fail "README command failed: $cmd"; }
    n=$((n + 1))
done < "$tmp/cc.sh"
[ "$n" -ge 2 ] || fail "only $n consumer commands found in the README"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
echo "build-tree-test: the README's provider and $n consumer commands built and ran from build/: 1 passed, 0 failed"
