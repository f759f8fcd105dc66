#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source file of the tree says its license in its first five lines
# (LICENSE; README "License"). Lists the files that do not and fails.
# pcwgen's golden outputs (tests/pcwgen/golden) are exempt: a generated
# header is its user's, and the goldens are compared byte for byte.
# Usage: scripts/check-spdx.sh   (from the top of a git checkout)
set -eu
missing=$(git ls-files -- '*.c' '*.h' '*.cc' '*.sh' '*.py' '*.mk' '*.pml' '*.1' \
              '*.in' '*.map' '*.inc' Makefile debian/rules .ci/run \
              ':!tests/pcwgen/golden/' |
    while IFS= read -r f; do
        [ -f "$f" ] || continue
        head -n 5 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"
    done)
if [ -n "$missing" ]; then
    echo "check-spdx: no 'SPDX-License-Identifier: MIT' in the first five lines of:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    exit 1
fi
echo "check-spdx: every source file carries its SPDX line"
