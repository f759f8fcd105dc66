#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarise pcw_bench's Google Benchmark JSON: every figure beside its
baseline from the same run, the ratio, and the target (issues 5, 10, 14). Callback figures compare
p50 latencies (pcw p50 / socket round-trip p50).

    python3 bench/summarize.py bench/results/latest.json             # text
    python3 bench/summarize.py --markdown bench/results/latest.json  # for docs/performance.md
    python3 bench/summarize.py --cpu ...   # CPU time instead of wall-clock (a loaded machine)
    python3 bench/summarize.py --runs a.json b.json c.json  # several full runs side by side:
        # each run's ratio, the median (min-max), and "met" only when met in every run

With --benchmark_repetitions=N the median of the N runs is used.
Exits 0 even when targets are missed (they are goals, not tests); exits 1 if
the file holds a failed benchmark.
"""
import json
import re
import statistics
import sys

SUFFIX = re.compile(r"/(real_time|manual_time|iterations:\d+|min_time:[\d.]+|repeats:\d+|threads:\d+)")
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class BadRun(Exception):
    pass


def load(path, clock="real_time"):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BadRun(f"{path}: not a readable Google Benchmark JSON file ({e})")
    if not isinstance(doc, dict):
        raise BadRun(f"{path}: not a Google Benchmark JSON file (no object at the top)")
    runs, errors = {}, []
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        key = SUFFIX.sub("", b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            errors.append((key, b.get("error_message", "")))
            continue
        runs.setdefault(key, []).append(b)
    figs = {}
    for key, rs in runs.items():
        f = {"ns": statistics.median(r[clock] * TO_NS[r.get("time_unit", "ns")] for r in rs)}
        # (Process CPU time too: history/record's target is a CPU ratio.)
        f["cpu_ns"] = statistics.median(r.get("cpu_time", 0) * TO_NS[r.get("time_unit", "ns")] for r in rs)
        for field in set().union(*(r.keys() for r in rs)):
            vals = [r[field] for r in rs if isinstance(r.get(field), (int, float))]
            if vals and field not in ("real_time", "cpu_time"):
                f[field] = statistics.median(vals)
        figs[key] = f
    return doc.get("context", {}), figs, errors


def si(x, unit=""):
    for div, p in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g} {p}{unit}".strip()
    return f"{x:.3g} {unit}".strip()


def t(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.3g} ns"


def rows(figs):
    """(figure, result, baseline, baseline result, ratio, target, status)"""
    out = []

    def get(k):
        return figs.get(k)

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "NOT MET")

    for pcw, raw in (("update/pcw_plain", "update/raw_store"), ("update/pcw_add", "update/raw_store"),
                     ("update/pcw_atomic", "update/raw_atomic")):
        a, b = get(pcw), get(raw)
        if a and b:
            r = a["ns"] / b["ns"]
            out.append((pcw, t(a["ns"]) + "/update", raw, t(b["ns"]), f"{r:.2f}x", "<= 1.05x", verdict(r <= 1.05)))
    if get("update/pcw_plain_fetch") and get("update/raw_store"):
        a, b = get("update/pcw_plain_fetch"), get("update/raw_store")
        out.append(("update/pcw_plain_fetch", t(a["ns"]) + "/update", "update/raw_store", t(b["ns"]),
                    f"{a['ns'] / b['ns']:.2f}x", "(pointer fetched per update)", ""))
    if get("update/pcw_time_ns") and get("update/raw_store"):
        a, b = get("update/pcw_time_ns"), get("update/raw_store")
        out.append(("update/pcw_time_ns", t(a["ns"]) + "/read", "update/raw_store", t(b["ns"]),
                    f"{a['ns'] / b['ns']:.2f}x", "(a clock read: a latency costs two)", ""))
    # Histograms (issue 27): an observation beside a plain store, the atomic
    # form beside an atomic add, and prometheus-cpp's Observe with the same
    # buckets beside pcw's.
    for fig, base, target, limit in (
            ("update/pcw_histogram_observe", "update/raw_store", "<= 2x", 2.0),
            ("update/pcw_histogram_observe_lzcnt", "update/raw_store", "(built with -mlzcnt)", None),
            ("update/histogram_floor", "update/raw_store", "(the two stores alone, no index)", None),
            ("update/pcw_histogram_observe_atomic", "update/raw_atomic", "(two atomic adds)", None)):
        a, b = get(fig), get(base)
        if a and b:
            r = a["ns"] / b["ns"]
            out.append((fig, t(a["ns"]) + "/observe", base, t(b["ns"]), f"{r:.2f}x", target,
                        verdict(r <= limit) if limit else ""))
    a, b = get("update/promcpp_histogram_observe"), get("update/pcw_histogram_observe")
    if a and b:
        r = a["ns"] / b["ns"]
        out.append(("update/pcw_histogram_observe", t(b["ns"]) + "/observe", "update/promcpp_histogram_observe",
                    t(a["ns"]), f"{r:.2f}x faster", ">= 5x faster", verdict(r >= 5)))
    if get("mmv/update") and get("update/raw_store"):
        a, b = get("mmv/update"), get("update/raw_store")
        out.append(("mmv/update", t(a["ns"]) + "/update", "update/raw_store", t(b["ns"]),
                    f"{a['ns'] / b['ns']:.2f}x", "(PCP, for comparison)", ""))

    # Threads each on its own counter: adjacent instances, with
    # PCW_REG_CACHELINE, and aligned raw words (issue 10).
    for k in sorted({int(x.rsplit("/", 1)[1]) for x in figs if x.startswith("update/raw_atomic_threads/")}):
        raw = get(f"update/raw_atomic_threads/{k}")
        for kind, target in (("pcw_atomic_threads", ""), ("pcw_atomic_threads_cacheline", "<= 1.1x"),
                             ("pcw_add_threads", "")):
            a = get(f"update/{kind}/{k}")
            if a and raw:
                r = a["ns"] / raw["ns"]
                out.append((f"update/{kind}/{k}", t(a["ns"]) + "/update", f"update/raw_atomic_threads/{k}",
                            t(raw["ns"]), f"{r:.2f}x", target, verdict(r <= 1.1) if target else ""))

    for kind in ("pcw", "pcw_names", "pcw_cacheline"):
        for n in (1000, 100000, 1000000):
            for c in (1, 4, 16):
                a = get(f"snapshot/{kind}/{n}/{c}")
                if not a:
                    continue
                vps, ips = a.get("items_per_second", 0), a.get("instances_per_second", 0)
                res = f"{si(vps, 'values/s')}, {si(ips, 'inst/s')}, {t(a['ns'])}/read"
                # Names and cache-line rows against the plain read; the plain
                # read against memcpy of the same value bytes.
                bk = f"snapshot/memcpy/{n}/{c}" if kind == "pcw" else f"snapshot/pcw/{n}/{c}"
                b = get(bk)
                ratio = f"{a['ns'] / b['ns']:.2f}x" if b else "-"
                base = f"{si(b.get('items_per_second', 0), 'values/s')}, {t(b['ns'])}" if b else "-"
                target, ok = "", None
                if kind == "pcw" and n == 100000 and c == 16:
                    target = "<= 1.3x memcpy"
                    ok = b is not None and a["ns"] / b["ns"] <= 1.3
                elif kind == "pcw_names":
                    target = "<= 1.5x without names"
                    ok = b is not None and a["ns"] / b["ns"] <= 1.5
                out.append((f"snapshot/{kind}/{n}/{c}", res, bk, base, ratio, target,
                            verdict(ok) if target else ""))
    for n in (1000, 100000, 1000000):
        a, b = get(f"mmv/snapshot/{n}"), get(f"snapshot/pcw/{n}/1")
        if a:
            ips = a.get("instances_per_second", 0)
            r = b["ns"] / a["ns"] if b else None
            out.append((f"snapshot/pcw/{n}/1 vs mmv/snapshot/{n}", f"{si(b.get('instances_per_second', 0), 'inst/s')}" if b else "-",
                        f"mmv/snapshot/{n} (PCP, no validation)", f"{si(ips, 'inst/s')}, {t(a['ns'])}/read",
                        f"{r:.2f}x" if r else "-", "pcw/mmv <= 0.8", verdict(r is not None and r <= 0.8)))

    a, b = get("lifecycle/create_close/2"), get("lifecycle/create_close/0")
    if b:
        out.append(("lifecycle/create_close/0", t(b["ns"]), "-", "-", "-", "", ""))
    if a:
        out.append(("lifecycle/create_close/2", t(a["ns"]), "lifecycle/create_close/0", t(b["ns"]) if b else "-",
                    f"{a['ns'] / b['ns']:.2f}x" if b else "-", "< 1 us", verdict(a["ns"] < 1000)))
    a = get("lookup/by_name/1000000")
    if a:
        out.append(("lookup/by_name/1000000", t(a["ns"]), "-", "-", "-", "< 150 ns", verdict(a["ns"] < 150)))
    # Callback collections (bench/callback.c): latency percentiles of every
    # call, beside a raw Unix-socket round trip of the same sizes.
    def lat(f):
        return f"p50 {t(f.get('p50_ns', f['ns']))}, p99 {t(f.get('p99_ns', 0))}"

    def p50_ratio(a, b):
        return f"{a.get('p50_ns', a['ns']) / b.get('p50_ns', b['ns']):.2f}x" if b else "-"

    sock = next((k for k in sorted(figs) if k.startswith("callback/baseline_socket_roundtrip/")), None)
    a, b = get("callback/collect/100"), get(sock) if sock else None
    if a:
        p50 = a.get("p50_ns", a["ns"])
        r = p50 / b.get("p50_ns", b["ns"]) if b else None
        out.append(("callback/collect/100", f"{lat(a)}, mean {t(a.get('mean_ns', a['ns']))}, "
                    f"{si(a.get('instances_per_second', 0), 'inst/s')}",
                    sock or "-", lat(b) if b else "-", p50_ratio(a, b), "p50 <= 1.0x socket",
                    verdict(r is not None and r <= 1.0)))
    else:
        out.append(("callback/collect/100", "not measured in this run", "-", "-", "-", "p50 <= 1.0x socket", "n/a"))
    a, b = get("callback/collect_concurrent"), get("callback/baseline_socket_concurrent")
    if a:
        n = int(a.get("clients", 4))
        out.append(("callback/collect_concurrent", f"{n} consumers: {lat(a)}, {si(a.get('ops_per_second', 0), 'collections/s')}",
                    "callback/baseline_socket_concurrent" if b else "-",
                    f"{lat(b)}, {si(b.get('ops_per_second', 0), 'round trips/s')}" if b else "-",
                    p50_ratio(a, b), "", ""))
    else:
        out.append(("callback/collect_concurrent", "not measured in this run", "-", "-", "-", "", ""))
    # The query layer (bench/query.c): collect + cook every value, beside
    # the raw read of the same provider shape, and beside that read followed
    # by one pass over its rows (snapshot/pcw_then_sum: what any consumer of
    # the snapshot pays at least).
    for n, c in ((1000, 16), (100000, 16)):
        a, b = get(f"snapshot/pcw_then_sum/{n}/{c}"), get(f"snapshot/pcw/{n}/{c}")
        if a:
            out.append((f"snapshot/pcw_then_sum/{n}/{c}", f"{t(a['ns'])}/read and pass",
                        f"snapshot/pcw/{n}/{c}", t(b["ns"]) if b else "-",
                        f"{a['ns'] / b['ns']:.2f}x" if b else "-", "", ""))
    for name in ("query/collect_cooked", "query/collect_then_rows", "query/collect_visit",
                 "query/collect_cook_all"):
        for n, c in ((1000, 16), (100000, 16)):
            a, b = get(f"{name}/{n}/{c}"), get(f"snapshot/pcw/{n}/{c}")
            if not a:
                continue
            r = a["ns"] / b["ns"] if b else None
            target, ok = "", None
            if name == "query/collect_cooked" and n == 100000:
                target, ok = "<= 1.5x", (r is not None and r <= 1.5)
            out.append((f"{name}/{n}/{c}", f"{si(a.get('items_per_second', 0), 'values/s')}, {t(a['ns'])}/collection",
                        f"snapshot/pcw/{n}/{c}", t(b["ns"]) if b else "-", f"{r:.2f}x" if r else "-", target,
                        verdict(ok) if target else ""))
            p = get(f"snapshot/pcw_then_sum/{n}/{c}")
            if name == "query/collect_cooked" and p:
                out.append((f"{name}/{n}/{c}", f"{t(a['ns'])}/collection", f"snapshot/pcw_then_sum/{n}/{c}",
                            t(p["ns"]), f"{a['ns'] / p['ns']:.2f}x", "", ""))
    # Reading a log back through the query layer (bench/history_read.c,
    # issue 28): cooked values per second beside the live query's.
    a, b = get("history/read_cooked/10000/600"), get("query/collect_cooked/100000/16")
    if a:
        # From the clock summarize reads (--cpu: CPU time), not Google
        # Benchmark's items_per_second (always wall-clock here).
        vps = a.get("series", 0) * a.get("samples", 0) / (a["ns"] / 1e9)
        bvps = b.get("instances", 0) * b.get("counters", 0) / (b["ns"] / 1e9) if b else 0
        out.append(("history/read_cooked/10000/600", si(vps, "values/s"),
                    "query/collect_cooked/100000/16", si(bvps, "values/s") if b else "-",
                    f"{bvps / vps:.1f}x slower" if b and vps else "-",
                    ">= 50 M/s", verdict(vps >= 50e6)))
    # Recording a log (bench/history_record.c): its CPU beside the query
    # layer's collection of the same shape alone (issue 28: <= 1.3x), and
    # one hour's bytes a sample (<= 2 B; Gorilla's 1.37 B, typeperf's CSV).
    a, b = get("history/record/6250/16"), get("query/collect_cooked/6250/16")
    if a:
        r = a["cpu_ns"] / b["cpu_ns"] if b and b["cpu_ns"] else None
        out.append(("history/record/6250/16", f"{t(a['cpu_ns'])} CPU/sample",
                    "query/collect_cooked/6250/16", t(b["cpu_ns"]) + " CPU" if b else "-",
                    f"{r:.2f}x" if r else "-", "<= 1.3x CPU", verdict(r is not None and r <= 1.3)))
    # pcwstat's own recorder (bench/history_pcwstat.c) on the same shape.
    a, b = get("history/record_pcwstat/6250/16"), get("query/collect_cooked/6250/16")
    if a:
        r = a["cpu_ns"] / b["cpu_ns"] if b and b["cpu_ns"] else None
        out.append(("history/record_pcwstat/6250/16", f"{t(a['cpu_ns'])} CPU/sample",
                    "query/collect_cooked/6250/16", t(b["cpu_ns"]) + " CPU" if b else "-",
                    f"{r:.2f}x" if r else "-", "<= 1.3x CPU", verdict(r is not None and r <= 1.3)))
    # The same with values that advance every sample, beside the collection
    # of that provider (its rates cooked).
    a, b = get("history/record_churn/6250/16"), get("history/collect_cooked_churn/6250/16")
    if a:
        r = a["cpu_ns"] / b["cpu_ns"] if b and b["cpu_ns"] else None
        out.append(("history/record_churn/6250/16", f"{t(a['cpu_ns'])} CPU/sample",
                    "history/collect_cooked_churn/6250/16", t(b["cpu_ns"]) + " CPU" if b else "-",
                    f"{r:.2f}x" if r else "-", "<= 1.3x CPU", verdict(r is not None and r <= 1.3)))
    a = get("history/size_hour/10000")
    if a and "log_bytes_per_sample" in a:
        x = a["log_bytes_per_sample"]
        out.append(("history/size_hour/10000", f"{x:.2f} B/sample",
                    "Gorilla 1.37 B; typeperf CSV", f"{a.get('csv_bytes_per_sample', 0):.2f} B/sample",
                    f"{x / 1.37:.2f}x", "<= 2 B/sample", verdict(x <= 2.0)))
    # Histograms' quantiles cooked (bench/histogram_query.c, issue 27): the
    # collection and cooking beside the raw snapshot of the same bytes.
    for name, target in (("histogram/query_p99/10000", "<= 3x"), ("histogram/query_default/10000", "")):
        a, b = get(name), get("histogram/snapshot/10000")
        if a:
            r = a["ns"] / b["ns"] if b else None
            out.append((name, f"{t(a['ns'])}/collection", "histogram/snapshot/10000",
                        t(b["ns"]) if b else "-", f"{r:.2f}x" if r else "-", target,
                        verdict(r is not None and r <= 3) if target else ""))
    # pcw-exporter (bench/export.c): a whole scrape over HTTP beside the same
    # scrape formatted into a buffer, and that beside the query layer's
    # collection alone.
    for n, c in ((100000, 1), (10000, 16)):
        a, b, q = get(f"export/scrape/{n}/{c}"), get(f"export/format/{n}/{c}"), get(f"export/collect/{n}/{c}")
        if a:
            r = a["ns"] / b["ns"] if b else None
            target, ok = ("< 10 ms", a["ns"] < 10e6) if (n, c) == (100000, 1) else ("", None)
            out.append((f"export/scrape/{n}/{c}", f"{t(a['ns'])}/scrape, {si(a.get('bytes', 0), 'B')}",
                        f"export/format/{n}/{c}", t(b["ns"]) if b else "-", f"{r:.2f}x" if r else "-",
                        target, verdict(ok) if target else ""))
        if b and q:
            out.append((f"export/format/{n}/{c}", f"{t(b['ns'])}/scrape", f"export/collect/{n}/{c}",
                        t(q["ns"]), f"{b['ns'] / q['ns']:.1f}x", "", ""))
    # The gzip scrape (issue 30: <= 2x the plain one), in wall time and in
    # the exporter's CPU time (bench/export.c's exporter_cpu_ns).
    a, b = get("export/scrape_gzip/100000/1"), get("export/scrape/100000/1")
    if a:
        r = a["ns"] / b["ns"] if b else None
        out.append(("export/scrape_gzip/100000/1", f"{t(a['ns'])}/scrape, {si(a.get('bytes', 0), 'B')}",
                    "export/scrape/100000/1", t(b["ns"]) if b else "-",
                    f"{r:.2f}x" if r else "-", "<= 2x", verdict(r is not None and r <= 2.0)))
        ca, cb = a.get("exporter_cpu_ns"), b.get("exporter_cpu_ns") if b else None
        if ca and cb:
            out.append(("export/scrape_gzip/100000/1 (exporter CPU)", f"{t(ca)}/scrape",
                        "export/scrape/100000/1 (exporter CPU)", t(cb), f"{ca / cb:.2f}x", "", ""))
    # The protobuf scrape beside the text scrape of the same shape.
    for n, c in ((100000, 1), (10000, 16)):
        a, b = get(f"export/scrape_proto/{n}/{c}"), get(f"export/scrape/{n}/{c}")
        if a:
            out.append((f"export/scrape_proto/{n}/{c}", f"{t(a['ns'])}/scrape, {si(a.get('bytes', 0), 'B')}",
                        f"export/scrape/{n}/{c}", t(b["ns"]) if b else "-",
                        f"{a['ns'] / b['ns']:.1f}x" if b else "-", "", ""))
    # pcwtop (bench/pcwtop.c): one refresh of its data layer beside the raw
    # snapshot of the same counterset.
    a, b = get("pcwtop/refresh/1000000"), get("snapshot/pcw/1000000/4")
    if a:
        r = a["ns"] / b["ns"] if b else None
        out.append(("pcwtop/refresh/1000000", f"{t(a['ns'])}/refresh", "snapshot/pcw/1000000/4",
                    t(b["ns"]) if b else "-", f"{r:.2f}x" if r else "-", "<= 2x",
                    verdict(r is not None and r <= 2)))
    # Containers (bench/containers.c): the option's steady-state cost, the
    # collection beside the same collection without it; discovery and the
    # walk beside nothing (figures of their own).
    a, b = get("containers/collect_on/1000/4"), get("containers/collect_off/1000/4")
    if a:
        r = a["ns"] / b["ns"] if b else None
        out.append(("containers/collect_on/1000/4", f"{t(a['ns'])}/collection",
                    "containers/collect_off/1000/4", t(b["ns"]) if b else "-",
                    f"{r:.2f}x" if r else "-", "<= 1.1x", verdict(r is not None and r <= 1.1)))
    for name, unit in (("containers/discover/100", "discovery"), ("containers/walk/100", "walk"),
                       ("containers/check/100", "check")):
        a = get(name)
        if a:
            out.append((name, f"{t(a['ns'])}/{unit}", "-", "-", "-", "", ""))
    a = get("segment/bytes_per_instance")
    if a:
        v = a.get("bytes_per_instance", 0)
        out.append(("segment/bytes_per_instance", f"{v:.1f} B", "-", "-", "-", "<= 64 B", verdict(v <= 64)))
    return out


RATIO = re.compile(r"^([\d.]+)x")
QUANTITY = re.compile(r"^([\d.]+) ?(ns|us|ms|s|B)\b")


def quantity(row):
    """A row's number for comparing runs: its ratio, or else its result
    (a time in ns, or bytes) when the target is absolute."""
    m = RATIO.match(row[4])
    if m:
        return float(m.group(1)), "x"
    m = QUANTITY.match(row[1])
    if m:
        v, unit = float(m.group(1)), m.group(2)
        return (v * TO_NS[unit], "ns") if unit in TO_NS else (v, unit)
    return None


def show(v, unit):
    if unit == "x":
        return f"{v:.2f}x"
    return t(v) if unit == "ns" else f"{v:.3g} {unit}"


def runs_table(paths, clock):
    """Rows of several full runs side by side: each run's figure, the median
    and the spread, and in how many runs the target was met (issue 30: a
    target counts as met when it is met in every run)."""
    per, order, machines = [], [], []
    for p in paths:
        ctx, figs, errors = load(p, clock)
        for key, msg in errors:
            print(f"FAILED: {p}: {key}: {msg}", file=sys.stderr)
        machines.append(f"{ctx.get('date', '?')}, load avg {ctx.get('load_avg', '?')}")
        by = {}
        for r in rows(figs):
            k = (r[0], r[2])
            if k not in by:
                by[k] = r
                if k not in order:
                    order.append(k)
        per.append(by)
    head = ["figure", "baseline (same run)", "target"] + [f"run {i + 1}" for i in range(len(paths))] + \
        ["median (min-max)", "met"]
    body = []
    for k in order:
        rs = [by.get(k) for by in per]
        qs = [quantity(r) if r else None for r in rs]
        if not any(qs):
            continue
        # A target in parentheses is a note ("(built with -mlzcnt)"), not a goal.
        target = next((r[5] for r in rs if r and r[5] and not r[5].startswith("(")), "")
        unit = next(q[1] for q in qs if q)
        vals = [q[0] for q in qs if q]
        cells = [show(*q) if q else "-" for q in qs]
        spread = f"{show(statistics.median(vals), unit)} ({show(min(vals), unit)}-{show(max(vals), unit)})"
        met = ""
        if target:
            n = sum(1 for r in rs if r and r[6] == "met")
            met = f"{n} of {len(paths)}" + (" (met)" if n == len(paths) else " (NOT MET)")
        body.append([k[0], k[1], target] + cells + [spread, met])
    return head, body, machines


def main(argv):
    if "--runs" in argv:
        md = "--markdown" in argv
        clock = "cpu_time" if "--cpu" in argv else "real_time"
        paths = [a for a in argv if not a.startswith("--")]
        if not paths:
            print("summarize.py --runs: name the runs' JSON files", file=sys.stderr)
            return 2
        head, body, machines = runs_table(paths, clock)
        print(f"Runs (times: {clock}): " + "; ".join(f"run {i + 1}: {m}" for i, m in enumerate(machines)) + "\n")
        if md:
            print("| " + " | ".join(head) + " |")
            print("|" + "|".join("---" for _ in head) + "|")
            for r in body:
                print("| " + " | ".join(f"`{x}`" if i in (0, 1) and x not in ("-", "") else x
                                        for i, x in enumerate(r)) + " |")
        else:
            w = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
            for r in [head] + body:
                print("  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip())
        return 0
    md = "--markdown" in argv
    args = [a for a in argv if not a.startswith("--")]
    path = args[0] if args else "bench/results/latest.json"
    clock = "cpu_time" if "--cpu" in argv else "real_time"
    ctx, figs, errors = load(path, clock)
    head = ("figure", "result", "baseline (same run)", "baseline result", "ratio", "target", "status")
    body = rows(figs)
    machine = (f"{ctx.get('date', '?')}, {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs "
               f"@ {ctx.get('mhz_per_cpu', '?')} MHz, load avg {ctx.get('load_avg', '?')}, "
               f"Google Benchmark library build: {ctx.get('library_build_type', '?')}; times: {clock}")
    if md:
        print(f"Run: {machine}\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for r in body:
            print("| " + " | ".join(f"`{x}`" if i in (0, 2) and x not in ("-", "") else x for i, x in enumerate(r)) + " |")
    else:
        print(f"\npcw benchmark summary ({path})\n{machine}\n")
        w = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
        for r in [head] + body:
            print("  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip())
    for key, msg in errors:
        print(f"FAILED: {key}: {msg}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadRun as e:
        print(f"summarize.py: {e}", file=sys.stderr)
        sys.exit(2)
