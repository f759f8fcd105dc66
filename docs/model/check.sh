#!/bin/bash
# SPDX-License-Identifier: MIT
# docs/model/check.sh [--extended] [WORKDIR]
#
# Runs the Promela model of pcw's slot protocol (docs/model/pcw.pml) with
# spin: every configuration below must verify exhaustively (no assertion
# violated, no invalid end state, search complete), and every negative
# variant and reachability probe must produce a counterexample trail, whose
# story (the model's printf lines) and failed assertion are printed.
# `make check-model` runs it; docs/model/README.md explains the runs.
#
# --extended adds runs of up to 7 minutes and 4.7 GB each (README: "Runs
# and results"; two-readers needs MODEL_MEMLIM=6000).
#
# Bounds: exhaustive search (no bitstate), state compression (COLLAPSE),
# depth limit -m200000 (far above the depths reached, <= 3,900: a run that
# hits it fails), pan memory limit MODEL_MEMLIM MB (default 3072).
set -euo pipefail

extended=0
if [ "${1:-}" = --extended ]; then
    extended=1
    shift
fi
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-build/model}
memlim=${MODEL_MEMLIM:-3072}
cc=${CC:-cc}
command -v spin >/dev/null || {
    echo "check-model: spin is not installed (apt-get install spin)" >&2
    exit 1
}
mkdir -p "$work"
work=$(cd "$work" && pwd)
failures=0
start_all=$(date +%s)

# [O=-O2] [MODEL=file.pml] run NAME EXPECT PATTERN DEFINES...  (pan is
# compiled with $O, -O0 by default: it compiles in 2 s instead of 20; the big
# runs ask for -O2; MODEL is pcw.pml by default)
#   EXPECT = pass: exhaustive search, no error.
#   EXPECT = fail: a counterexample whose failed assertion matches PATTERN.
run() {
    local name=$1 expect=$2 pattern=$3 m=${MODEL:-pcw.pml}
    shift 3
    local d="$work/$name"
    rm -rf "$d"
    mkdir -p "$d"
    cp "$here/$m" "$d/"
    local t0 t1
    t0=$(date +%s.%N)
    (cd "$d" && spin "$@" -a "$m" >spin.log 2>&1 &&
        "$cc" "${O:--O0}" -w -DSAFETY -DCOLLAPSE -DMEMLIM="$memlim" -o pan pan.c >cc.log 2>&1) || {
        echo "FAIL  $name: spin/cc failed:"
        cat "$d/spin.log" "$d/cc.log" 2>/dev/null | head -20
        failures=$((failures + 1))
        return
    }
    (cd "$d" && ./pan -m200000 -w25 >pan.log 2>&1) || true
    t1=$(date +%s.%N)
    local secs stored trans depth mem errors
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    stored=$(awk '/states, stored/ { print $1 }' "$d/pan.log")
    trans=$(awk '/transitions \(= stored\+matched\)/ { print $1 }' "$d/pan.log")
    depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$d/pan.log")
    mem=$(awk '/total actual memory usage/ { print $1 }' "$d/pan.log")
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$d/pan.log")
    local stats="${stored:-?} states, ${trans:-?} transitions, depth ${depth:-?}, ${mem:-?} MB, ${secs} s"
    local incomplete="max search depth too small\|out of memory"
    [ "$expect" = fail ] || incomplete="$incomplete\|Search not completed"
    if grep -q "$incomplete" "$d/pan.log"; then
        echo "FAIL  $name: search incomplete ($stats):"
        grep "$incomplete" "$d/pan.log" | head -3
        failures=$((failures + 1))
        return
    fi
    if [ "$expect" = pass ]; then
        if [ "$errors" = 0 ]; then
            echo "ok    $name: verified exhaustively: $stats"
        else
            echo "FAIL  $name: the model fails ($stats):"
            grep "^pan:" "$d/pan.log" | head -3
            (cd "$d" && spin -t "$@" "$m" 2>&1 | grep -v '^[[:space:]]*[a-z_]*\[[0-9]*\] = ' |
                head -60) || true
            failures=$((failures + 1))
        fi
        return
    fi
    # expect = fail
    if [ "${errors:-0}" = 0 ] || [ ! -f "$d/$m.trail" ]; then
        echo "FAIL  $name: expected a counterexample, spin found none ($stats)"
        failures=$((failures + 1))
        return
    fi
    (cd "$d" && spin -t "$@" "$m" >trail.txt 2>&1) || true
    local violated
    violated=$(sed -n 's/^spin: text of failed assertion: //p' "$d/trail.txt" | head -1)
    if ! printf '%s\n' "$violated" | grep -q -- "$pattern"; then
        echo "FAIL  $name: counterexample violates '$violated', expected '$pattern'"
        failures=$((failures + 1))
        return
    fi
    echo "ok    $name: counterexample, $violated (trail: $(grep -c . "$d/$m.trail") steps, $stats)"
    # The story: the model's printf lines up to the failed assertion.
    sed -n '/^spin: trail ends/q; /^[[:space:]]*[CPLA][0-9]*:/p' "$d/trail.txt" |
        sed 's/^[[:space:]]*/        /'
}

echo "== the model (docs/model/pcw.pml): properties that must hold"
# Two provider threads, a chunk of two slots, three creates, one consumer
# reading the run of both slots: cross-thread reuse, the batched check
# (live-bit word) and its per-slot fallback.
O=-O2 run main pass - -DNINST=3 -DNO_LOOKUP
# Two chunks of one slot each: each consumer run is one chunk's.
run chunks pass - -DNINST=3 -DNO_LOOKUP -DNC=2
# Name blocks reused by a slot of the other chunk (needs four creates).
run names pass - -DNINST=4 -DNO_LOOKUP -DNPROV=1 -DNC=2
# Lookups (RCU read-side sections) against reclaim; deadlock freedom.
run rcu pass - -DNINST=4 -DNREADERS=0
# A recording read and a read reusing its names (R5, cset.generation).
run name-cache pass - -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DNAME_CACHE
# Without C0, with one provider thread: C2 orders same-thread reuse.
run no-c0-one-thread pass - -DNINST=3 -DNO_LOOKUP -DNO_C0 -DNPROV=1

echo "== reachability: the checked paths are taken (each must find a trail)"
run reach-batch fail '(0)' -DNINST=3 -DNO_LOOKUP -DREACH_BATCH
run reach-fallback fail '(0)' -DNINST=3 -DNO_LOOKUP -DREACH_FALLBACK
run reach-name-reuse fail 'b_slot' -DNINST=4 -DNO_LOOKUP -DNPROV=1 -DNC=2 -DREACH_NAME_REUSE
run reach-cache-reuse fail '(0)' -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DNAME_CACHE -DREACH_REUSE

echo "== negative variants: each must produce a counterexample"
run no-recheck fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DNO_RECHECK
run no-grace fail 'held!=x' -DNINST=3 -DNREADERS=0 -DNO_GRACE
run no-c0 fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DNO_C0
run p1-relaxed fail 'half' -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DP1_RELAXED
run relaxed-publish fail 'half' -DNINST=3 -DNO_LOOKUP -DRELAXED_PUBLISH
run c1-relaxed fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DC1_RELAXED
run clear-late fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DCLEAR_LATE
run no-r5 fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DNAME_CACHE -DNO_R5
# A known limit of the acquire/release protocol (README: "Counter updates
# from another thread"): kept as an expected counterexample.
run app-writer fail 'misattributed' -DNINST=3 -DNO_LOOKUP -DAPP_WRITER

echo "== the reply area (docs/model/area.pml): who writes it when"
MODEL=area.pml run area pass - -DNREQ=6
MODEL=area.pml run area-always-flag fail 'c_lo==id' -DNREQ=4 -DALWAYS_FLAG
MODEL=area.pml run area-clear-any fail 'c_lo==id' -DNREQ=4 -DCLEAR_ANY
MODEL=area.pml run area-write-any fail 'c_lo==id' -DNREQ=4 -DWRITE_ANY

if [ "$extended" = 1 ]; then
    echo "== extended"
    # The batched form without live bits (the first layout v2 text).
    O=-O2 run gen-batch pass - -DNINST=3 -DNO_LOOKUP -DGEN_BATCH
    O=-O2 run no-c2 pass - -DNINST=3 -DNO_LOOKUP -DNO_C2
    run p0-late pass - -DNINST=3 -DNO_LOOKUP -DNPROV=1 -DNAME_CACHE -DP0_LATE
    O=-O2 run name-cache-2 pass - -DNINST=3 -DNO_LOOKUP -DNAME_CACHE
    O=-O2 run two-readers pass - -DNINST=3 -DNO_LOOKUP -DNC=2 -DNREADERS=2
fi

echo "check-model: $(($(date +%s) - start_all)) s, $failures failure(s)"
[ "$failures" = 0 ]
