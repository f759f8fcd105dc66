#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-headers.sh on the fixtures of tests/check-headers/: it
# refuses private.h naming each private declaration (and not the public
# ones), refuses unclosed.h, accepts marked.h. check-abi runs it.
# Usage: scripts/check-headers-test.sh
set -eu
dir=tests/check-headers
out=$(./scripts/check-headers.sh "$dir/private.h" 2>&1) &&
    { echo "check-headers-test: $dir/private.h accepted" >&2; exit 1; }
for name in PCW__PRIVATE_MACRO pcw__private_struct pcw__private_typedef PCW__PRIVATE_ENUMERATOR \
            pcw__private_variable pcw__private_function pcw__private_inline; do
    echo "$out" | grep -q " $name\$" ||
        { echo "check-headers-test: $dir/private.h: $name not named:" >&2; echo "$out" >&2; exit 1; }
done
if echo "$out" | grep -q 'pcw_public\|PCW__ZERO'; then
    echo "check-headers-test: $dir/private.h: a public name or a use was refused:" >&2; echo "$out" >&2; exit 1
fi
out=$(./scripts/check-headers.sh "$dir/unclosed.h" 2>&1) &&
    { echo "check-headers-test: $dir/unclosed.h accepted" >&2; exit 1; }
echo "$out" | grep -q 'says not why' && echo "$out" | grep -q 'without its end' ||
    { echo "check-headers-test: $dir/unclosed.h: wrong complaint:" >&2; echo "$out" >&2; exit 1; }
./scripts/check-headers.sh "$dir/marked.h" >/dev/null
echo "check-headers-test: 3 fixtures judged right"
