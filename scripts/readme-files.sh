#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes each code block of the README that follows a line
# `<!-- file: NAME -->` (```c or ```cpp, possibly indented inside a list)
# to DIR/NAME, so that tests build the README's programs as written.
# Usage: scripts/readme-files.sh DIR   (from the top of the tree)
set -eu
dir=$1
mkdir -p "$dir"
awk -v dir="$dir" '
    { sub(/^   /, "") }
    /^<!-- file: .* -->$/ { name = $3; next }
    name != "" && /^```(c|cpp)$/ { out = dir "/" name; inblock = 1; next }
    inblock && /^```$/ { inblock = 0; name = ""; close(out); next }
    inblock { print > out }
' README.md
