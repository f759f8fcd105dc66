#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/bench-summary/run.sh - tests of bench/summarize.py --runs, the table
# docs/performance.md takes its figures from (issue 30: a target is met only
# when every full run meets it). Three small Google Benchmark JSON files:
#   lookup/by_name/1000000   120, 140, 160 ns: an absolute target (< 150 ns)
#                            met in two runs of three: "2 of 3 (NOT MET)",
#                            median 140 ns, spread 120-160 ns;
#   pcwtop/refresh/1000000   1.5x, 1.9x, 1.8x its snapshot: "3 of 3 (met)",
#                            median 1.80x;
#   a figure missing from one run is "-" in that run's column;
#   a file that is not JSON is named in the error, status 2.
# Usage: tests/bench-summary/run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
summarize="$here/../../bench/summarize.py"
tmp=$(mktemp -d /tmp/pcw-bench-summary.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0

# run FILE LOOKUP_NS REFRESH_MS SNAPSHOT_MS [gzip]: one run's JSON.
run() {
    extra=
    [ "${5:-}" = gzip ] && extra='{"name": "export/scrape_gzip/100000/1", "run_type": "iteration", "real_time": 9, "cpu_time": 9, "time_unit": "ms"},
    {"name": "export/scrape/100000/1", "run_type": "iteration", "real_time": 6, "cpu_time": 6, "time_unit": "ms"},'
    cat > "$1" <<JSON
{"context": {"date": "2026-11-27T07:00:00", "load_avg": [0.1, 0.1, 0.1]},
 "benchmarks": [
    $extra
    {"name": "lookup/by_name/1000000", "run_type": "iteration", "real_time": $2, "cpu_time": $2, "time_unit": "ns"},
    {"name": "pcwtop/refresh/1000000", "run_type": "iteration", "real_time": $3, "cpu_time": $3, "time_unit": "ms"},
    {"name": "snapshot/pcw/1000000/4", "run_type": "iteration", "real_time": $4, "cpu_time": $4, "time_unit": "ms"}
 ]}
JSON
}
run "$tmp/1.json" 120 15 10 gzip
run "$tmp/2.json" 140 19 10
run "$tmp/3.json" 160 18 10 gzip

out=$(python3 "$summarize" --runs "$tmp/1.json" "$tmp/2.json" "$tmp/3.json")
status=$?
# expect DESCRIPTION PATTERN: a line of the output matches PATTERN (grep -E).
expect() {
    if printf '%s\n' "$out" | grep -Eq "$2"; then
        echo "ok: $1"
    else
        echo "FAILED: $1: no line matches /$2/"
        failed=$((failed + 1))
    fi
}
[ "$status" -eq 0 ] || { echo "FAILED: summarize.py --runs exited $status"; failed=$((failed + 1)); }
expect "an absolute target met in two runs of three is not met" \
    '^lookup/by_name/1000000 .*120 ns +140 ns +160 ns +140 ns \(120 ns-160 ns\) +2 of 3 \(NOT MET\)'
expect "a ratio target met in every run is met, with its median" \
    '^pcwtop/refresh/1000000 +snapshot/pcw/1000000/4 +<= 2x +1.50x +1.90x +1.80x +1.80x \(1.50x-1.90x\) +3 of 3 \(met\)'
expect "a figure missing from a run shows as -" \
    '^export/scrape_gzip/100000/1 .*1.50x +- +1.50x'
out=$(python3 "$summarize" --runs 2>&1)
[ $? -eq 2 ] && printf '%s' "$out" | grep -q "name the runs" &&
    echo "ok: no files is a usage error" || { echo "FAILED: no files"; failed=$((failed + 1)); }
printf 'not json' > "$tmp/bad.json"
out=$(python3 "$summarize" --runs "$tmp/1.json" "$tmp/bad.json" 2>&1)
[ $? -eq 2 ] && printf '%s' "$out" | grep -q "bad.json: not a readable Google Benchmark JSON file" &&
    echo "ok: a damaged file is named" || { echo "FAILED: damaged file: $out"; failed=$((failed + 1)); }
[ "$failed" -eq 0 ] || exit 1
echo "bench-summary: all passed"
