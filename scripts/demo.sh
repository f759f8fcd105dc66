#!/bin/sh
# SPDX-License-Identifier: MIT
# The demo: run the Geometric Waves provider, watch its live values with
# pcwdump and pcwtop -b for a few seconds, show a latency histogram's
# quantiles with pcwstat (examples/request_latency.c), stop both cleanly.
# Needs no terminal.
# Usage: scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build}
dir=$(mktemp -d /tmp/pcw-demo.XXXXXX)
export PCW_DIR="$dir"
cleanup() {
    [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true
    [ -n "${lpid:-}" ] && kill "$lpid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

echo "demo: starting the Geometric Waves provider (segments under $dir)"
"$build/examples/geometric_waves" > "$dir/provider.log" 2>&1 &
pid=$!
# Wait (at most 5 s) for its segment to appear.
i=0
until ls "$dir"/pcw-*/*.seg >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 50 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "demo: the provider did not start:" >&2
        cat "$dir/provider.log" >&2
        exit 1
    fi
    sleep 0.1
done
cat "$dir/provider.log"
echo "demo: live values, once a second:"
"$build/pcwdump" --counterset "Geometric Waves" --watch 1 -n 4
echo "demo: the same with pcwtop in batch mode (a few refreshes, as top -b):"
"$build/pcwtop" -b -c "Geometric Waves" -d 1 -n 3
echo "demo: integrity check:"
"$build/pcwdump" --check
echo "demo: a latency histogram (examples/request_latency.c, 1,000 simulated requests a"
echo "      second per endpoint): pcwstat's rate, mean, p50, p90, p99, p99.9 and max, twice"
"$build/examples/request_latency" > "$dir/latency.log" 2>&1 &
lpid=$!
i=0
until ls "$dir"/pcw-*/"$lpid"-*.seg >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 50 ] || ! kill -0 "$lpid" 2>/dev/null; then
        echo "demo: the latency provider did not start:" >&2
        cat "$dir/latency.log" >&2
        exit 1
    fi
    sleep 0.1
done
"$build/pcwstat" "\\Demo Requests(*)\\Latency" -si 1 -sc 2
kill -TERM "$lpid"
wait "$lpid"
lpid=
echo "demo: stopping the provider"
kill -TERM "$pid"
wait "$pid"
pid=
if ls "$dir"/pcw-*/*.seg >/dev/null 2>&1; then
    echo "demo: the provider left its segment behind" >&2
    exit 1
fi
echo "demo: done (the provider removed its segment on exit)"
echo "demo: next, your own program (README, \"From the demo to your own program\"):"
echo "    export PATH=\"\$PWD/$build:\$PATH\" PKG_CONFIG_PATH=\"\$PWD/$build/pkgconfig\""
echo "    cc -std=c11 main.c web.c \$(pkg-config --cflags --libs pcw-provider) -o web"
